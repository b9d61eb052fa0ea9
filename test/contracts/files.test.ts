/** The files stories (issue 12: files in, files out) on every platform that carries files. */
import { describe } from 'vitest';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { WebDriver } from './drivers/web.ts';
import { filesStories } from './files-stories.ts';

describe('Telegram', () => {
  filesStories({ start: () => TelegramDriver.start() });
});

describe('Slack', () => {
  filesStories({ start: () => SlackDriver.start() });
});

describe('Discord', () => {
  filesStories({ start: () => DiscordDriver.start() });
});

describe('Web console', () => {
  filesStories({ start: () => WebDriver.start() });
});
