/** The contract stories on Discord: slash commands, buttons and modals over the fake gateway. */
import { describe } from 'vitest';
import { changesStories } from './changes-stories.ts';
import { DiscordDriver } from './drivers/discord.ts';
import { contractStories } from './stories.ts';

describe('Discord', () => {
  contractStories({ start: () => DiscordDriver.start() });
  changesStories({ start: () => DiscordDriver.start() });
});
