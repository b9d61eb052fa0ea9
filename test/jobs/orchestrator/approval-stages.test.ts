/**
 * The stage marks of an approval (src/trace.ts), as `bench/queue-latency.ts --stages` reads
 * them: every stage from the command to the next agent's spawn is reached, once, in path order,
 * with times that never go backwards; without a subscriber nothing is published.
 */
import diagnostics from 'node:diagnostics_channel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STAGE_CHANNEL, STAGES, type StageMark } from '../../../src/trace.ts';
import { ALICE, GATE_WORKFLOW, makeEnv, type TestEnv } from './helpers.ts';

let env: TestEnv;
const marks: StageMark[] = [];
let onSpawned: (() => void) | undefined;
const onMark = (m: unknown) => {
  marks.push(m as StageMark);
  if ((m as StageMark).stage === 'spawned') onSpawned?.();
};
beforeEach(async () => {
  marks.length = 0;
  env = await makeEnv();
  env.workflow('gate', GATE_WORKFLOW);
});
afterEach(async () => {
  diagnostics.unsubscribe(STAGE_CHANNEL, onMark);
  await env.dispose();
});

describe('approval stages', () => {
  it('marks every stage from the approval to the spawn, in path order', async () => {
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'gate',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    expect((await o.waitUntilIdle(run.id)).status).toBe('awaiting');
    diagnostics.subscribe(STAGE_CHANNEL, onMark);
    const spawned = new Promise<void>((resolve) => {
      onSpawned = resolve;
    });
    const r = await o.command(run.id, 'approve-1', {
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: ALICE,
    });
    expect(r.ok).toBe(true);
    await spawned;
    const mine = marks.filter((m) => m.runId === run.id);
    expect(mine.map((m) => m.stage)).toEqual([...STAGES]);
    for (let i = 1; i < mine.length; i++)
      expect(mine[i]!.at).toBeGreaterThanOrEqual(mine[i - 1]!.at);
    expect((await o.waitUntilIdle(run.id)).status).toBe('completed');
  });

  it('publishes nothing while nobody subscribes', async () => {
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'gate',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    await o.waitUntilIdle(run.id);
    // The channel object is shared by name: count what reaches publish, subscriber or not.
    const channel = diagnostics.channel(STAGE_CHANNEL);
    expect(channel.hasSubscribers).toBe(false);
    const publish = channel.publish.bind(channel);
    let published = 0;
    channel.publish = (message: unknown) => {
      published++;
      publish(message);
    };
    try {
      await o.command(run.id, 'approve-1', {
        type: 'answerCheckpoint',
        answer: 'approve',
        actor: ALICE,
      });
      expect((await o.waitUntilIdle(run.id)).status).toBe('completed');
    } finally {
      channel.publish = publish;
    }
    expect(published).toBe(0);
    expect(marks).toEqual([]);
  });
});
