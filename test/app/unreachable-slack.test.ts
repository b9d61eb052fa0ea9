/**
 * An archived Slack channel next to a working Telegram chat, one bridge (`startBridge`), real
 * Bolt and grammY against the fakes. The Slack channel refuses on its own state (archived); the
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

describe('an archived Slack channel', () => {
  it('is marked unreachable; Telegram gets the run, the starter is told once there', async () => {
    const channel = slack.chatRef.split(':')[2]!;
    slack.fake.api.channels.archive(channel);

    await telegram.sendCommand('alice', 'run demo add login');
    const cp = await w.message(telegram, /Checkpoint plan:1/);
    const mark = await w.bridge.repos.unreachable.get(slack.chatRef);
    expect(mark).toMatchObject({ reason: 'is_archived' });
    const warning = await w.message(telegram, /cannot post in/);
    expect(warning.text).toContain(`cannot post in ${slack.chatRef} (is_archived)`);
    expect(warning.text).toMatch(/unarchive/);

    await telegram.press('bob', cp, 'Approve');
    await w.message(telegram, /Checkpoint review:1/);
    expect(w.messages(telegram, /cannot post in/)).toHaveLength(1);
    expect(slack.latestMessages()).toEqual([]);
  });
});
