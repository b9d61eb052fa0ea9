/** The contract stories on Slack: signed requests to the bridge's /slack/ route (HTTP mode). */
import { describe } from 'vitest';
import { SlackDriver } from './drivers/slack.ts';
import { contractStories } from './stories.ts';

describe('Slack', () => {
  contractStories({ start: () => SlackDriver.start() });
});
