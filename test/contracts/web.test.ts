/**
 * The contract stories on the web console, over real HTTP (login link, cookie, CSRF, /events).
 * The console keeps its messages, prompts and sessions in bridge.db: after a restart the browser
 * stays logged in and sees the same messages, as on the chat platforms.
 */
import { describe } from 'vitest';
import { changesStories } from './changes-stories.ts';
import { WebDriver } from './drivers/web.ts';
import { contractStories } from './stories.ts';

describe('web console', () => {
  contractStories({ start: () => WebDriver.start() });
  changesStories({ start: () => WebDriver.start() });
});
