/** The issue 29 reply stories (words-stories.ts) on every platform. */
import { describe } from 'vitest';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { WebDriver } from './drivers/web.ts';
import { wordsStories } from './words-stories.ts';

describe('Telegram', () => wordsStories({ start: () => TelegramDriver.start() }));
describe('Slack', () => wordsStories({ start: () => SlackDriver.start() }));
describe('Discord', () => wordsStories({ start: () => DiscordDriver.start() }));
describe('web console', () => wordsStories({ start: () => WebDriver.start() }));
