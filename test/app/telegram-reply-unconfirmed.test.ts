/**
 * A guidance reply to a checkpoint message whose id the bridge does not know (issue 29, found by
 * bench/failover.ts): its send's answer not confirmed yet when the reply came (seconds under
 * load), or a copy repeated by a leader killed in the send window. The reply names no known
 * message, but the message it replies to names its run: the words are a note for that run, and
 * acknowledged, never dropped as chatter. Whole bridge, real grammY against the fake Bot API.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TelegramDriver } from '../contracts/drivers/telegram.ts';
import { runIdOf, World } from '../contracts/world.ts';
import { waitUntil } from '../support/slowdown.ts';

const NOTED = /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes/;

let tg: TelegramDriver;
let w: World;

beforeEach(async () => {
  tg = await TelegramDriver.start();
  w = await World.create([tg]);
});
afterEach(async () => {
  await w.cleanup();
});

/**
 * Waits until every send and edit of the outbox has its answer recorded: a confirmation landing
 * after forgetCopies (seconds late on a loaded machine) would record the ids again.
 */
async function outboxSettled(home: string): Promise<void> {
  await waitUntil(
    () => {
      const db = new Database(path.join(home, 'bridge.db'), { readonly: true });
      try {
        const row = db
          .prepare(`select count(*) as n from outbox where state in ('pending', 'attempted')`)
          .get() as { n: number };
        return row.n === 0;
      } finally {
        db.close();
      }
    },
    { timeoutMs: 30_000, message: 'the outbox never had every answer recorded' },
  );
}

/** bridge.db as a crash in the send window leaves it: the copy's message id never recorded. */
async function forgetCopies(home: string, runId: string): Promise<number> {
  await outboxSettled(home);
  const db = new Database(path.join(home, 'bridge.db'));
  try {
    db.prepare(`delete from run_messages where run_id = ?`).run(runId);
    return db
      .prepare(`update checkpoint_messages set message_ref = null where run_id = ?`)
      .run(runId).changes;
  } finally {
    db.close();
  }
}

describe('a reply to a checkpoint message whose id the bridge does not know', () => {
  it('is a note for the run the message names, and is acknowledged', async () => {
    await tg.sendCommand('alice', 'run demo add login');
    const plan = await w.message(tg, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    expect(await forgetCopies(w.home, runId)).toBeGreaterThan(0);

    await tg.replyTo('bob', plan, 'keep the form small');
    await w.message(tg, NOTED);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.feedback?.map((f) => [f.kind, f.text])).toEqual([
      ['guidance', 'keep the form small'],
    ]);
  });

  it('stays chatter when the message names a run this chat does not follow', async () => {
    await tg.sendCommand('alice', 'run demo add login');
    const plan = await w.message(tg, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    await forgetCopies(w.home, runId);
    const db = new Database(path.join(w.home, 'bridge.db'));
    db.prepare(`delete from status_messages where run_id = ?`).run(runId);
    db.close();

    await tg.replyTo('bob', plan, 'keep the form small');
    // A command after it is answered, so the reply before it was handled (and said nothing).
    await tg.sendCommand('alice', 'runs');
    await w.message(tg, /^Recent runs:/);
    expect(w.messages(tg, NOTED)).toEqual([]);
    expect((await w.bridge.orchestrator.getRun(runId)).feedback ?? []).toEqual([]);
  });
});
