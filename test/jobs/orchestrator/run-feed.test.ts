/**
 * The change feed: a bridge's update listeners get every commit to a run, its own and another
 * process's, each event exactly once and in ledger order, even when its own commit arrives
 * before it has seen the other process's (the gap is filled from the ledger).
 */
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { StoppingError } from '../../../src/errors.ts';
import type { RunUpdate } from '../../../src/jobs/orchestrator/types.ts';
import { startChild } from './fixtures/child.ts';
import { ALICE, ledgerOf, makeEnv, type TestEnv, waitFor } from './helpers.ts';

const CHILD = fileURLToPath(new URL('./fixtures/approve-child.ts', import.meta.url));
const THREE = `id: three
steps:
  - { id: a, agent: demo, prompt: a, checkpoint: { when: after } }
  - { id: b, agent: demo, prompt: b, checkpoint: { when: after } }
  - { id: c, agent: demo, prompt: c, checkpoint: { when: after } }
`;

let env: TestEnv;
afterEach(() => env.dispose());

describe('the change feed', () => {
  it('delivers own and foreign commits once each, in ledger order', async () => {
    env = await makeEnv();
    env.workflow('three', THREE);
    // A slow poll, so our own commit often comes before the other process's is seen.
    const o = await env.open({ feed: { pollMs: 400 }, worker: { concurrency: 1 } });
    const got: RunUpdate[] = [];
    o.onUpdate((u) => {
      got.push(u);
    });
    await o.startFeed();
    const run = await o.startRun({
      workflow: 'three',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    const at = (cp: string) =>
      waitFor(async () => (await o.getRun(run.id)).checkpoint?.id === cp, 20_000, cp);

    await at('a:1');
    const first = startChild(CHILD, [env.home, run.id]);
    await first.line(/^done$/, 30_000);
    // b's checkpoint was opened by the other process; we answer before our poll could see it.
    await at('b:1');
    const own = await o.command(run.id, 'own:b', {
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: ALICE,
    });
    expect(own.ok).toBe(true);
    await at('c:1');
    const last = startChild(CHILD, [env.home, run.id]);
    await last.line(/^done$/, 30_000);
    await waitFor(() => got.at(-1)?.state.status === 'completed', 20_000, 'the end delivered');

    let seq = 0;
    for (const u of got) {
      expect(u.state.seq - u.events.length).toBe(seq);
      seq = u.state.seq;
    }
    const ledger = ledgerOf(run);
    expect(seq).toBe(ledger.at(-1)!.seq);
    expect(got.flatMap((u) => u.events)).toEqual(ledger.flatMap((e) => e.events));
    // Both kinds were seen: commits of this process and of the two others.
    const actors = new Set(ledger.map((e) => e.actor.id));
    expect(actors).toContain('cli:child');
    expect(actors).toContain(ALICE.id);
  });

  it('replays at start what it had not shown, and nothing twice', async () => {
    env = await makeEnv();
    env.workflow('three', THREE);
    const first = await env.open({ feed: {}, worker: { concurrency: 1 } });
    await first.startFeed();
    const run = await first.startRun({
      workflow: 'three',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    await waitFor(async () => (await first.getRun(run.id)).checkpoint?.id === 'a:1', 20_000, 'a:1');
    await first.close();
    const shownBefore = ledgerOf(run).at(-1)!.seq;

    const child = startChild(CHILD, [env.home, run.id]);
    await child.line(/^done$/, 30_000);

    const second = await env.open({ feed: {}, worker: false });
    const got: RunUpdate[] = [];
    second.onUpdate((u) => {
      got.push(u);
    });
    await second.startFeed();
    await waitFor(() => got.length > 0, 10_000, 'the replay');
    expect(got).toHaveLength(1);
    expect(got[0]!.state.seq - got[0]!.events.length).toBe(shownBefore);
    expect(got[0]!.state.checkpoint?.id).toBe('b:1');
  });

  it('replays at the next start an update the bridge’s stop cut short', async () => {
    env = await makeEnv();
    env.workflow('three', THREE);
    const first = await env.open({ feed: {}, worker: { concurrency: 1 } });
    let cutFrom: number | undefined;
    // The chats were not told all of it: the outbox stopped with its messages still queued.
    first.onUpdate(async (u) => {
      if (u.state.checkpoint?.id !== 'a:1' || cutFrom !== undefined) return;
      cutFrom = u.state.seq - u.events.length;
      throw new StoppingError();
    });
    await first.startFeed();
    const run = await first.startRun({
      workflow: 'three',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    await waitFor(() => cutFrom !== undefined, 20_000, 'the update cut short');
    await first.close();

    const second = await env.open({ feed: {}, worker: false });
    const got: RunUpdate[] = [];
    second.onUpdate((u) => {
      got.push(u);
    });
    await second.startFeed();
    await waitFor(() => got.length > 0, 10_000, 'the replay');
    expect(got[0]!.state.seq - got[0]!.events.length).toBe(cutFrom);
    expect(got[0]!.state.checkpoint?.id).toBe('a:1');
    expect(ledgerOf(run).at(-1)!.seq).toBe(got[0]!.state.seq);
  });
});
