/**
 * Issue 18 item 10: a run started with `resumeFromLastStep: false` whose worker is SIGKILLed
 * mid-step: the worker that takes the job again after the lease expires does not re-run the
 * step; the run blocks for a human, who resumes it as a new attempt.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterEach, expect, it } from 'vitest';
import { type Child, startChild } from './fixtures/child.ts';
import { ALICE, FAST_LEASES, ledgerOf, makeEnv, type TestEnv, waitFor } from './helpers.ts';

const WORKER = fileURLToPath(new URL('./fixtures/worker-child.ts', import.meta.url));

let env: TestEnv | undefined;
const children: Child[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    c.process.kill('SIGKILL');
    await c.exited();
  }
  await env?.dispose();
  env = undefined;
});

it('--no-resume: a job re-taken after a lost lease blocks the run instead of re-running', async () => {
  env = await makeEnv(FAST_LEASES);
  env.workflow(
    'crash',
    'id: crash\nsteps:\n  - id: slow\n    agent: demo\n    prompt: "demo: sleep=1200"\n',
  );
  const o = await env.open({ worker: false });
  const workerArgs = [env.dbFile, JSON.stringify(FAST_LEASES)];
  const first = startChild(WORKER, workerArgs);
  children.push(first);
  await first.line(/^ready$/);

  const run = await o.startRun({
    workflow: 'crash',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
    resumeFromLastStep: false,
  });
  const jobId = `${run.id}:slow:1`;
  const spawned = await first.line(new RegExp(`^spawned ${jobId} (\\d+)$`));
  first.process.kill('SIGKILL');
  await first.exited();
  process.kill(-Number(spawned[1]), 'SIGKILL');

  const second = startChild(WORKER, workerArgs);
  children.push(second);
  await waitFor(async () => (await o.getRun(run.id)).status === 'blocked', 30_000, 'blocked');
  const state = await o.getRun(run.id);
  expect(state.blocked).toMatchObject({
    kind: 'interrupted',
    reason: 'interrupted during step slow: resume or retry',
  });
  expect(state.steps[0]).toMatchObject({ status: 'failed', error: 'interrupted', attempt: 1 });
  expect(await env.queue.get(jobId)).toMatchObject({ state: 'completed', attempts: 2 });
  const log = fs.readFileSync(await o.logPath(run.id, 'slow', 1), 'utf8');
  expect(log).toContain('taken again after its worker was lost; not run');
  expect(second.lines.filter((l) => l.startsWith(`spawned ${jobId}`))).toEqual([]);
  const events = ledgerOf(state).flatMap((e) => e.events.map((ev) => ev.type));
  expect(events.filter((t) => t === 'stepInterrupted')).toHaveLength(1);
});
