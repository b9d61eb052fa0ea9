/** The contract stories on Telegram: the bridge polls the fake Bot API. */
import { describe } from 'vitest';
import { changesStories } from './changes-stories.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { contractStories } from './stories.ts';

describe('Telegram', () => {
  contractStories({ start: () => TelegramDriver.start() });
  changesStories({ start: () => TelegramDriver.start() });
});
