/**
 * A session offer (Resume / Restart / Abort for an interrupted session) across a kill of the
 * bridge (issue 39), through the outbox as `serve` runs it, each story leaving bridge.db as the
 * kill would (the bridge stopped, then its rows set back) and starting the next process:
 * - killed between Telegram's answer to the offer's send and the confirmation: the resend is
 *   the copy (its id in bridge.db), the first message loses its buttons and shows the choice too;
 * - killed between the choice's record and its application: the next start applies it, once;
 * - killed after the choice was applied, before it was recorded so and the copies edited: the
 *   next start shows it, and the engine's keys keep it applied once;
 * - killed, then the session moved on: its new offer replaces the old one, which goes dead;
 * - a `sessions` command redelivered after a kill (before or after its audit) offers nothing
 *   again.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/events.ts';
import { readLedger } from '../../src/engine/ledger/ledger-file.ts';
import type { StoredMessage } from '../fakes/telegram.ts';
import { ALICE, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create({ outbox: true });
});
afterEach(async () => {
  await w.cleanup();
});

const OFFER = /Interrupted (coordinator|flow) session/;
const offers = () => w.messages(OFFER);
const buttonsOf = (m: StoredMessage | undefined) =>
  ((m?.replyMarkup?.inline_keyboard ?? []) as unknown[][]).flat();
const now = (m: StoredMessage) => w.fake.message(TEAM.id, m.message_id);
/** Offer messages that still offer a choice. */
const live = () => offers().filter((m) => buttonsOf(now(m)).length > 0);

/** The coordinator's own state file (no phasebridge run behind it), stopped in `state`. */
function coordinatorStopped(state: string): void {
  const dir = path.join(w.workspace, '.coordinator');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'state.json'),
    JSON.stringify({
      session_id: 'coord-2026-01-20-abc123',
      state,
      tasks: { queued: ['T2'], in_progress: ['T1'], completed: [], failed: [] },
    }),
  );
}

async function restart(): Promise<void> {
  await w.stop();
  await w.start();
}

/** A flow run blocked on a failing step, offered after a restart; its id and the offer. */
async function blockedFlowOffered(): Promise<{ runId: string; offer: StoredMessage }> {
  fs.mkdirSync(path.join(w.workspace, 'workflows'), { recursive: true });
  fs.writeFileSync(
    path.join(w.workspace, 'workflows', 'flowfail.workflow.yaml'),
    'id: flowfail\nlayout: flow\nsteps:\n  - id: preflight\n    agent: demo\n    prompt: "demo: exit=3"\n',
  );
  w.say(ALICE, '/run flowfail try it');
  const blocked = await w.message(/^⚠️ Run \S+ Blocked, needs a human/);
  const runId = /Run (\S+)/.exec(blocked.text!)![1]!;
  await restart();
  return { runId, offer: await w.message(OFFER) };
}

const keyOf = (runId: string) => ({
  workspace: path.resolve(w.workspace),
  kind: 'flow' as const,
  session: runId,
  state: 'blocked',
});

/** The run's queued steps in its ledger (one per attempt of the step). */
function stepsQueued(runId: string): number {
  const ledger = readLedger(path.join(w.workspace, '.phasebridge', 'runs', runId, 'ledger.jsonl'));
  return (ledger.entries as { events: RunEvent[] }[])
    .flatMap((e) => e.events)
    .filter((e) => e.type === 'stepQueued').length;
}

/** What the press committed before the kill: every copy closed with Alice's Resume. */
async function resumeRecorded(runId: string, key: string): Promise<void> {
  const decided = await w.b.repos.sessionOffers.decide(
    keyOf(runId),
    'resume',
    `telegram:${ALICE.id}`,
    {
      key,
      chat: TEAM_REF,
    },
  );
  expect(decided).toBe(true);
}

describe('a session offer across a kill', () => {
  it('sent twice by a kill in the send window: one live message, its id known, the choice shown on both', async () => {
    // A message bridge.db knows in the chat, below the offer's two sends.
    w.say(ALICE, '/sessions');
    await w.message(/^No interrupted session/);
    coordinatorStopped('EXECUTING');
    await restart();
    const first = await w.message(OFFER);
    await w.stop();
    // The kill: Telegram has the offer, bridge.db neither its id nor the send's answer.
    const db = new Database(path.join(w.home, 'bridge.db'));
    const n = db
      .prepare(
        `update outbox set state = 'attempted', result_ref = null where kind = 'send' and owner_json like '{"kind":"offer",%'`,
      )
      .run().changes;
    db.prepare('update session_offers set message_ref = null').run();
    db.close();
    expect(n).toBe(1);
    await w.start();

    await until(() => offers().length === 2, 'the resend');
    const resent = offers()[1]!;
    await until(() => live().length === 1, 'the first message to lose its buttons');
    expect(live()[0]!.message_id).toBe(resent.message_id);
    const [copy] = await w.b.repos.sessionOffers.copies({
      workspace: path.resolve(w.workspace),
      kind: 'coordinator',
      session: 'coord-2026-01-20-abc123',
      state: 'EXECUTING',
    });
    expect(copy!.messageRef).toMatch(new RegExp(`\\b${resent.message_id}$`));

    expect(await w.answerTo(w.press(ALICE, resent, 'Abort'))).toBe(
      'Aborting session coord-2026-01-20-abc123…',
    );
    for (const m of [first, resent]) {
      await until(
        () => (now(m)?.text ?? '').includes('Aborted by @alice'),
        `message ${m.message_id} to show the choice`,
      );
    }
    expect(live()).toEqual([]);
    expect(fs.existsSync(path.join(w.workspace, '.coordinator'))).toBe(false);
  });

  it('killed between the choice and its application: the next start applies it once and shows it', async () => {
    const { runId, offer } = await blockedFlowOffered();
    expect(stepsQueued(runId)).toBe(1);
    await resumeRecorded(runId, 'chat:telegram:callback:lost');
    await restart();

    await w.runState(runId, (s) => s.steps[0]!.attempt === 2, 'the step retried');
    await until(
      () => (now(offer)?.text ?? '').includes('Resumed by @alice'),
      'the offer to show the choice',
    );
    expect(buttonsOf(now(offer))).toEqual([]);
    // Chosen for this interruption: not offered again.
    expect(offers()).toHaveLength(1);
    expect(live()).toEqual([]);
    expect(stepsQueued(runId)).toBe(2);
    const [copy] = await w.b.repos.sessionOffers.copies(keyOf(runId));
    expect(copy!.messageRef).toMatch(new RegExp(`\\b${offer.message_id}$`));
  });

  it('killed after the choice was applied, before its copies were edited: shown at start, applied once', async () => {
    const { runId, offer } = await blockedFlowOffered();
    const key = 'chat:telegram:callback:lost';
    await resumeRecorded(runId, key);
    // The press's application reached the engine (under the press's key), then the kill.
    await w.b.orchestrator.command(runId, `${key}:retry`, {
      type: 'retry',
      actor: { id: `telegram:${ALICE.id}`, name: 'Alice' },
    });
    await w.runState(
      runId,
      (s) => s.status === 'blocked' && s.steps[0]!.attempt === 2,
      'the retry to fail',
    );
    await restart();

    await until(
      () => (now(offer)?.text ?? '').includes('Resumed by @alice'),
      'the offer to show the choice',
    );
    expect(buttonsOf(now(offer))).toEqual([]);
    expect(live()).toEqual([]);
    // Applied again under the same keys at start: the engine committed nothing twice.
    const state = await w.b.orchestrator.getRun(runId);
    expect(state.steps[0]!.attempt).toBe(2);
    expect(stepsQueued(runId)).toBe(2);
  });

  it('a sessions command redelivered after a kill offers nothing again, audited or not', async () => {
    coordinatorStopped('EXECUTING');
    const command = w.say(ALICE, '/sessions');
    await w.message(/^1 interrupted session/);
    expect(offers()).toHaveLength(1);
    // The kill came before Telegram heard the update was handled: the next process gets it again.
    await restart();
    w.fake.pushUpdate(command);
    await until(() => w.fake.unconfirmedUpdates === 0, 'the update handled');
    expect(offers()).toHaveLength(1);
    expect(w.messages(/^1 interrupted session/)).toHaveLength(1);
    // The kill came before the command's audit was written, too (and so before the adapter
    // recorded the update as applied, which follows the handling).
    await w.stop();
    const db = new Database(path.join(w.home, 'bridge.db'));
    expect(db.prepare(`delete from audit where action = 'command:sessions'`).run().changes).toBe(1);
    const applied = db
      .prepare(`delete from channel_state where platform = 'telegram' and key = ?`)
      .run(`update:${command.update_id}`);
    expect(applied.changes).toBe(1);
    db.close();
    await w.start();
    w.fake.pushUpdate(command);
    await until(() => w.messages(/^1 interrupted session/).length === 2, 'the command answered');
    expect(offers()).toHaveLength(1);
    expect(live()).toHaveLength(1);
    const copies = await w.b.repos.sessionOffers.copies({
      workspace: path.resolve(w.workspace),
      kind: 'coordinator',
      session: 'coord-2026-01-20-abc123',
      state: 'EXECUTING',
    });
    expect(copies.map((c) => c.messageRef)).toEqual([`${TEAM_REF}/${offers()[0]!.message_id}`]);
  });

  it('killed, then the session moved on: the new offer replaces the old one', async () => {
    coordinatorStopped('EXECUTING');
    await restart();
    const old = await w.message(OFFER);
    await w.stop();
    coordinatorStopped('MERGING');
    await w.start();

    await until(() => offers().length === 2, 'the offer of the new state');
    const fresh = offers()[1]!;
    expect(fresh.text).toContain('State: MERGING');
    await until(() => buttonsOf(now(old)).length === 0, 'the old offer to lose its buttons');
    expect(now(old)!.text).toContain('The session is MERGING now: see the newer offer.');
    expect(live().map((m) => m.message_id)).toEqual([fresh.message_id]);
    // A restart now changes nothing: one live offer.
    await restart();
    expect(offers()).toHaveLength(2);
    expect(live().map((m) => m.message_id)).toEqual([fresh.message_id]);
  });
});
