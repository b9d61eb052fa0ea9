/** The contract stories on Telegram: the bridge polls the fake Bot API. */
import { describe } from 'vitest';
import { TelegramDriver } from './drivers/telegram.ts';
import { contractStories } from './stories.ts';

describe('Telegram', () => {
  contractStories({ start: () => TelegramDriver.start() });
});
