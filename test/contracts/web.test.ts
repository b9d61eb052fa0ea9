/**
 * The contract stories on the web console, over real HTTP (login link, cookie, CSRF, /events).
 * The console keeps its messages in memory: after a restart the bridge posts the waiting run's
 * status and checkpoint again, and the restart story presses that new copy.
 */
import { describe } from 'vitest';
import { WebDriver } from './drivers/web.ts';
import { contractStories } from './stories.ts';

describe('web console', () => {
  contractStories({ start: () => WebDriver.start(), messagesSurviveRestart: false });
});
