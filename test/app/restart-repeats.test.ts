/**
 * A kill between Slack's answer to a post and the outbox's record of it (issue 39), met by the
 * whole bridge (`startBridge`, real Bolt against the fake Slack): the next process finds the
 * message by the nonce it was posted with (its metadata) instead of posting it again, so the
 * chat shows one checkpoint message, and it is the one the bridge edits.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackDriver } from '../contracts/drivers/slack.ts';
import { until } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';
import { holdsFor } from '../support/slowdown.ts';

let slack: SlackDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  w = await World.create([slack]);
});
afterEach(async () => {
  await w.cleanup();
});

describe('a Slack post whose answer a kill never let the outbox record', () => {
  it('is found by its nonce at the next start, not posted again, and is the copy edited', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    await w.stop();
    // What the kill leaves: the send `attempted`, no ref in bridge.db, the message in the channel.
    const db = new Database(path.join(w.home, 'bridge.db'));
    const { owner_json: owner } = db
      .prepare(
        `select owner_json from outbox where kind = 'send' and owner_json like '{"kind":"checkpoint",%'`,
      )
      .get() as { owner_json: string };
    const copy = (JSON.parse(owner) as { id: number }).id;
    db.prepare(`update outbox set state = 'attempted', result_ref = null where owner_json = ?`).run(
      owner,
    );
    db.prepare('update checkpoint_messages set message_ref = null where id = ?').run(copy);
    db.close();

    await w.start();
    const refOf = async () =>
      (await w.bridge.repos.checkpointMessages.get(copy))?.messageRef ?? null;
    await until(async () => (await refOf()) !== null, 'the copy to learn its message');
    expect(await refOf()).toContain(plan.id);
    await holdsFor(
      () => w.messages(slack, /Checkpoint plan:1/).length === 1,
      1000,
      'the checkpoint posted twice',
    );
    expect(slack.fake.calls.some((c) => c.method === 'conversations.history')).toBe(true);

    await slack.press('bob', plan, 'Approve');
    const closed = await w.settles(slack, plan, (m) => m.buttons.length === 0, 'the decision');
    expect(closed.text).toMatch(/Approved by/);
  });
});
