/**
 * Durability of a command through the Orchestrator, seen in the file-system calls (node's `fs`,
 * observed and passed through; thread-pool fsyncs recorded when they complete) and the real
 * sqlite queue's enqueue (observed, passed through): an approval's job is queued only once the
 * approval's ledger line is fsynced; run.json is written after the enqueue (not on the
 * approval → spawn path) and is durable (fsynced, renamed, folder fsynced) before the command's
 * caller is answered. The chats hear of the approval once its line is fsynced, before the job is
 * queued (the person who pressed waits for the edit; the next agent's spawn forks synchronously).
 */
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Traced, traceFs } from '../../support/fs-trace.ts';
import { ALICE, GATE_WORKFLOW, makeEnv, type TestEnv } from './helpers.ts';

let env: TestEnv;
let trace: ReturnType<typeof traceFs> | undefined;
beforeEach(async () => {
  env = await makeEnv();
  env.workflow('gate', GATE_WORKFLOW);
});
afterEach(async () => {
  trace?.restore();
  await env.dispose();
});

describe('approval commit order', () => {
  it('tells the chats once the ledger line is fsynced, queues the next job next, and answers after run.json is durable', async () => {
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'gate',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    const idle = await o.waitUntilIdle(run.id);
    expect(idle.status).toBe('awaiting');
    const runDir = path.join(env.workspace, '.phasebridge', 'runs', run.id);
    const ledger = path.join(runDir, 'ledger.jsonl');
    const runJson = path.join(runDir, 'run.json');
    trace = traceFs();
    const t = trace;
    const enqueue = env.queue.enqueue.bind(env.queue);
    env.queue.enqueue = async (job, opts) => {
      t.mark(`enqueue ${job.stepId}`);
      return enqueue(job, opts);
    };
    const off = o.onUpdate((u) => t.mark(`update ${u.state.status}`));
    const r = await o.command(run.id, 'approve-1', {
      type: 'answerCheckpoint',
      answer: 'approve',
      actor: ALICE,
    });
    t.mark('answered');
    off();
    t.restore();
    expect(r.ok).toBe(true);
    const order = t.calls.flatMap((c: Traced) => {
      if (c.op === 'mark') return [c.file];
      if (c.op === 'write' && c.file === ledger) return ['ledger write'];
      if (c.op === 'fsync' && c.file === ledger) return ['ledger fsync'];
      if (c.op === 'fsync' && /\.run\.json\..*\.tmp$/.test(c.file)) return ['run.json fsync'];
      if (c.op === 'rename' && c.file === runJson) return ['run.json rename'];
      if (c.op === 'fsync' && c.file === runDir) return ['run folder fsync'];
      return [];
    });
    const answered = order.indexOf('answered');
    expect(order.slice(0, answered + 1)).toEqual([
      'ledger write',
      'ledger fsync',
      'update active',
      'enqueue b',
      'run.json fsync',
      'run.json rename',
      'run folder fsync',
      'answered',
    ]);
    expect((await o.waitUntilIdle(run.id)).status).toBe('completed');
  });
});
