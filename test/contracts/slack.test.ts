/** The contract stories on Slack: signed requests to the bridge's /slack/ route (HTTP mode). */
import { describe } from 'vitest';
import { changesStories } from './changes-stories.ts';
import { SlackDriver } from './drivers/slack.ts';
import { contractStories } from './stories.ts';

describe('Slack', () => {
  contractStories({ start: () => SlackDriver.start() });
  changesStories({ start: () => SlackDriver.start() });
});
