/**
 * The contract stories on the web console, over real HTTP (login link, cookie, CSRF, /events).
 * The console keeps its messages in memory, so the restart story is not run here (see the
 * report of issue 7: a restart loses the console's checkpoint messages).
 */
import { describe } from 'vitest';
import { WebDriver } from './drivers/web.ts';
import { contractStories } from './stories.ts';

describe('web console', () => {
  contractStories({ start: () => WebDriver.start(), messagesSurviveRestart: false });
});
