/** The live stories (answers in the run's thread, activity, typing, console links) on every platform. */
import { describe } from 'vitest';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { WebDriver } from './drivers/web.ts';
import { liveStories } from './live-stories.ts';

describe('Telegram', () => liveStories({ start: () => TelegramDriver.start() }));
describe('Slack', () => liveStories({ start: () => SlackDriver.start() }));
describe('Discord', () => liveStories({ start: () => DiscordDriver.start() }));
describe('web console', () => liveStories({ start: () => WebDriver.start() }));
