/**
 * A decided checkpoint whose copy never learnt its message id (a process killed before the id
 * was written back, as issue 39 found in 68 of 98 decided copies) is shown its decision at the
 * next start, in a new message, once: a second restart posts nothing more.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BOB, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

describe('decisions shown after a crash', () => {
  it('a decided copy without a message id gets the decision posted once, at the next start', async () => {
    w.say(BOB, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    await w.press(BOB, plan, 'Approve');
    await w.message(/^✅ Checkpoint plan:1/);
    await w.stop();
    // What a kill before the write-back left: the copy decided, its message id unknown.
    const raw = new Database(`${w.home}/bridge.db`);
    const changed = raw
      .prepare(
        `update checkpoint_messages set message_ref = null, decision_shown = 0 where checkpoint_id = 'plan:1'`,
      )
      .run().changes;
    raw.close();
    expect(changed).toBe(1);

    await w.start();
    await until(() => w.messages(/^✅ Checkpoint plan:1/).length === 2, 'the decision re-posted');
    const reposted = w.messages(/^✅ Checkpoint plan:1/).at(-1)!;
    expect(reposted.text).toMatch(/Approved by @bob/);
    expect(reposted.replyMarkup?.inline_keyboard ?? []).toEqual([]);
    await until(
      () => w.b.repos.checkpointMessages.unshownDecisions().then((r) => r.length === 0),
      'the copy marked shown',
    );

    await w.stop();
    await w.start();
    // Another run's checkpoint posted after the restart proves the catch-up ran.
    w.say(BOB, '/run demo a second one');
    await until(() => w.messages(/Checkpoint plan:1/).length >= 3, 'the second run’s checkpoint');
    expect(w.messages(/^✅ Checkpoint plan:1/)).toHaveLength(2);
  });
});
