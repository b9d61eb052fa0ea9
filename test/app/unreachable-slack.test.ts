/**
 * A Slack channel that refuses the bot next to a working Telegram chat, one bridge
 * (`startBridge`), real Bolt and grammY against the fakes. The Slack channel refuses on its own
 * state (archived, the bot removed, the channel deleted or hidden); the
 * Telegram chat gets the status and the checkpoint, the run moves on, and the starter is told
 * once, in the chat they started from.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackDriver } from '../contracts/drivers/slack.ts';
import { TelegramDriver } from '../contracts/drivers/telegram.ts';
import { World } from '../contracts/world.ts';

let slack: SlackDriver;
let telegram: TelegramDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  telegram = await TelegramDriver.start();
  w = await World.create([slack, telegram]);
});
afterEach(async () => {
  await w.cleanup();
});

/** The channel refusing the bot, from the fake's membership state, and what Slack answers. */
const REFUSALS = [
  {
    what: 'an archived Slack channel',
    refuse: (fake: SlackDriver['fake'], channel: string) => fake.api.channels.archive(channel),
    reason: 'is_archived',
    hint: /unarchive/,
  },
  {
    what: 'a Slack channel the bot was removed from',
    refuse: (fake: SlackDriver['fake'], channel: string) => fake.api.channels.removeBot(channel),
    reason: 'not_in_channel',
    hint: /invite it/,
  },
  {
    what: 'a Slack channel deleted or made private without the bot',
    refuse: (fake: SlackDriver['fake'], channel: string) => fake.api.channels.hide(channel),
    reason: 'channel_not_found',
    hint: /gone or the bot cannot see it/,
  },
];

describe.each(REFUSALS)('$what', ({ refuse, reason, hint }) => {
  it(`is marked unreachable (${reason}); Telegram gets the run, the starter is told once there`, async () => {
    const channel = slack.chatRef.split(':')[2]!;
    refuse(slack.fake, channel);

    await telegram.sendCommand('alice', 'run demo add login');
    const cp = await w.message(telegram, /Checkpoint plan:1/);
    const mark = await w.bridge.repos.unreachable.get(slack.chatRef);
    expect(mark).toMatchObject({ reason });
    const warning = await w.message(telegram, /cannot post in/);
    expect(warning.text).toContain(`cannot post in ${slack.chatRef} (${reason})`);
    expect(warning.text).toMatch(hint);

    await telegram.press('bob', cp, 'Approve');
    await w.message(telegram, /Checkpoint review:1/);
    expect(w.messages(telegram, /cannot post in/)).toHaveLength(1);
    expect(slack.latestMessages()).toEqual([]);
  });
});
