/**
 * What the chat shows outlives a restart of the bridge (bridge.db, not memory): a reason typed
 * into a prompt asked before the restart still rejects, and the run's status message goes on
 * being edited; when it was deleted in the chat meanwhile, a new one is posted and edited; a
 * checkpoint copy a killed process stored but never queued is posted by the next one.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/telegram.ts';
import { ALICE, BOB, TEAM, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

const STATUS = /^Run \S+ · Demo/;

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

const runIdOf = (m: StoredMessage) => /— run (\S+)/.exec(m.text ?? '')![1]!;

async function restart(): Promise<void> {
  await w.stop();
  await w.start();
}

async function planCheckpoint(): Promise<{ plan: StoredMessage; runId: string }> {
  w.say(ALICE, '/run demo add a login page');
  const plan = await w.message(/Checkpoint plan:1/);
  return { plan, runId: runIdOf(plan) };
}

describe('after a restart', () => {
  it('a command answered just before the stop, never confirmed to Telegram, is not answered again', async () => {
    const update = w.say(ALICE, '/runs');
    // The getUpdates that would confirm /runs is held before Telegram sees its offset: the
    // stop comes first, so the next process is given /runs again, as Telegram does.
    let dropHeld: (err: Error) => void = () => {};
    const held = new Promise<void>((_, reject) => {
      dropHeld = reject;
    });
    // Handled here too: under load the stop may come before the poller asked again at all.
    held.catch(() => {});
    w.fake.onArrival = (method, params) =>
      method === 'getUpdates' && Number(params.offset ?? 0) > update.update_id ? held : undefined;
    await w.message(/^No runs here yet\.$/);
    await w.stop();
    // The held call is dropped unapplied (its connection is gone): /runs stays unconfirmed.
    w.fake.onArrival = undefined;
    dropHeld(new Error('the poller went away'));
    await w.start();
    w.say(ALICE, '/whoami');
    await w.message(/Your role here: operator/);
    expect(w.messages(/^No runs here yet\.$/)).toHaveLength(1);
  });

  it('a reason typed into a prompt asked before the restart still rejects', async () => {
    const { plan, runId } = await planCheckpoint();
    expect(await w.answerTo(w.press(BOB, plan, 'Reject'))).toBe(
      'Reply to the prompt below with your reason to reject.',
    );
    const prompt = await w.message(/why do you reject checkpoint plan:1/);
    await restart();

    w.fake.userReplies({
      chatId: TEAM.id,
      messageId: prompt.message_id,
      from: BOB,
      text: 'needs tests first',
    });
    await w.message(/^❌ Run \S+ Failed: rejected by @bob: needs tests first/);
    const state = await w.b.orchestrator.getRun(runId);
    expect(state.status).toBe('failed');
    expect(state.checkpoints.at(-1)!.votes.map((v) => v.actor.id)).toEqual([`telegram:${BOB.id}`]);
    await until(
      () => /Reason given: needs tests first/.test(w.fake.message(TEAM.id, plan.message_id)!.text!),
      'the checkpoint copy to show the reason',
    );
  });

  it('edits the status message from before the restart', async () => {
    const { plan } = await planCheckpoint();
    const status = await w.message(STATUS);
    await restart();

    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toMatch(/^Approved/);
    await until(
      () => /checkpoint review:1/.test(w.fake.message(TEAM.id, status.message_id)!.text!),
      'the old status message to show the next checkpoint',
    );
    expect(w.messages(STATUS).map((m) => m.message_id)).toEqual([status.message_id]);
  });

  it('posts a new status message when the old one was deleted in the chat, and edits that one', async () => {
    const { plan } = await planCheckpoint();
    const status = await w.message(STATUS);
    await w.stop();
    w.fake.message(TEAM.id, status.message_id)!.deleted = true;
    await w.start();

    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toMatch(/^Approved/);
    const fresh = await w.message(STATUS);
    expect(fresh.message_id).not.toBe(status.message_id);
    await until(
      () => /checkpoint review:1/.test(w.fake.message(TEAM.id, fresh.message_id)!.text!),
      'the new status message to be edited as the run moves on',
    );
    expect(w.messages(STATUS)).toHaveLength(1);
  });

  it('posts the checkpoint a killed process stored but never sent, and its buttons work', async () => {
    const { plan, runId } = await planCheckpoint();
    await w.stop();
    // What a kill between storing the copy and queueing its send leaves: a copy row with no
    // message id, no send in the outbox, and nothing in the chat.
    const db = new Database(path.join(w.home, 'bridge.db'));
    const unsent = db
      .prepare(
        'update checkpoint_messages set message_ref = null, created_at = created_at - 1000 where run_id = ?',
      )
      .run(runId);
    db.close();
    expect(unsent.changes).toBe(1);
    w.fake.message(TEAM.id, plan.message_id)!.deleted = true;
    await w.start();

    const posted = await w.message(/Checkpoint plan:1/);
    expect(posted.message_id).not.toBe(plan.message_id);
    expect(w.messages(/Checkpoint plan:1/)).toHaveLength(1);
    expect(await w.answerTo(w.press(BOB, posted, 'Approve'))).toMatch(/^Approved/);
    const state = await w.b.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.decision?.answer).toBe('approve');
  });
});
