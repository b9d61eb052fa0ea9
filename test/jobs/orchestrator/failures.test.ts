/** Failing, cancelled, hanging and triggering agents, through the orchestrator and real processes. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, alive, ledgerOf, makeEnv, repeatedKeys, type TestEnv, waitFor } from './helpers.ts';

const FLAKY = fileURLToPath(new URL('./fixtures/flaky-agent.mjs', import.meta.url));

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** A one-step workflow `id` whose step runs `agent` with `prompt` and extra YAML lines. */
function oneStep(id: string, agent: string, prompt: string, extra = ''): string {
  return `id: ${id}\nsteps:\n  - id: build\n    agent: ${agent}\n    prompt: '${prompt}'\n${extra}`;
}

describe('agent failures', () => {
  it('retries a failed step (retries: 1) and the second attempt completes the run', async () => {
    env = await makeEnv();
    await env.repos.agents.add({
      name: 'flaky',
      engine: 'command',
      argv: [process.execPath, FLAKY],
    });
    env.workflow(
      'flaky',
      oneStep('flaky', 'flaky', 'build it', '    retries:\n      count: 1\n      backoff: 50ms\n'),
    );
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'flaky',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    expect(state.steps[0]).toMatchObject({ status: 'completed', attempt: 2 });
    const failed = ledgerOf(state)
      .flatMap((e) => e.events)
      .filter((e) => e.type === 'stepFailed');
    expect(failed).toEqual([
      expect.objectContaining({
        attempt: 1,
        error: 'exit code 3: demo agent failed',
        retryInMs: 50,
      }),
    ]);
    const firstLog = fs.readFileSync(await o.logPath(run.id, 'build', 1), 'utf8');
    expect(firstLog).toContain('demo-agent: failing with exit code 3');
    expect(repeatedKeys(ledgerOf(state))).toEqual([]);
  });

  it('blocks the run with "agent binary not found" for a missing binary', async () => {
    env = await makeEnv();
    await env.repos.agents.add({
      name: 'ghost',
      engine: 'command',
      argv: ['/nonexistent/ghost-agent'],
    });
    env.workflow('ghost', oneStep('ghost', 'ghost', 'boo'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'ghost',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('blocked');
    expect(state.blocked?.reason).toContain('agent binary not found: /nonexistent/ghost-agent');
    expect(state.steps[0]).toMatchObject({ status: 'failed' });
    expect(state.steps[0]!.error).toContain('agent binary not found');
    const [row] = await o.listRuns({ status: 'blocked' });
    expect(row?.id).toBe(run.id);
  });

  it('refuses to start a workflow naming an unknown agent', async () => {
    env = await makeEnv();
    env.workflow('typo', oneStep('typo', 'nobody', 'x'));
    const o = await env.open();
    await expect(
      o.startRun({ workflow: 'typo', workspace: env.workspace, spec: 's', actor: ALICE }),
    ).rejects.toThrow(/nobody/);
    expect(await o.listRuns()).toEqual([]);
  });

  it('cancel during a step kills the agent and cancels the run', async () => {
    env = await makeEnv();
    env.workflow('slow', oneStep('slow', 'demo', 'demo: sleep=20000'));
    const pids: number[] = [];
    const o = await env.open({ onAgentSpawn: ({ pid }) => pids.push(pid) });
    const run = await o.startRun({
      workflow: 'slow',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    await waitFor(
      async () => (await o.getRun(run.id)).steps[0]!.status === 'running',
      10_000,
      'running',
    );
    const pid = pids[0]!;
    expect(alive(pid)).toBe(true);
    const r = await o.command(run.id, 'cli:cancel-1', {
      type: 'cancel',
      reason: 'changed my mind',
      actor: ALICE,
    });
    expect(r.ok && r.state.status).toBe('cancelled');
    await waitFor(() => !alive(pid), 10_000, 'the agent to die');
    const job = await waitFor(async () => {
      const s = await env!.queue.get(`${run.id}:build:1`);
      return s?.state === 'cancelled' ? s : undefined;
    });
    expect(job.outcome).toMatchObject({ ok: false, cancelled: true });
    const state = await o.getRun(run.id);
    expect(state.status).toBe('cancelled');
    expect(state.outcome?.reason).toContain('changed my mind');
  });

  it('a step timeout kills a hanging agent and the grandchild it started', async () => {
    env = await makeEnv();
    env.workflow('hang', oneStep('hang', 'demo', 'demo: hang grandchild', '    timeout: 700ms\n'));
    const pids: number[] = [];
    const o = await env.open({ onAgentSpawn: ({ pid }) => pids.push(pid) });
    const run = await o.startRun({
      workflow: 'hang',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('blocked');
    expect(state.steps[0]!.error).toBe('timed out after 700ms');
    const log = fs.readFileSync(await o.logPath(run.id, 'build'), 'utf8');
    const grandchild = Number(/grandchild pid (\d+)/.exec(log)?.[1]);
    expect(grandchild).toBeGreaterThan(0);
    await waitFor(() => !alive(grandchild) && !alive(pids[0]!), 5000, 'agent and grandchild gone');
  });
});

describe('trigger directives', () => {
  it('runs the triggered agent as its own job (<step>+trigger), then continues', async () => {
    env = await makeEnv();
    const prompt = 'demo: directive=trigger agent=demo reason="demo: sleep=10"';
    env.workflow('trig', oneStep('trig', 'demo', prompt));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'trig',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    const events = ledgerOf(state).flatMap((e) => e.events.map((ev) => ev.type));
    expect(events).toContain('triggerQueued');
    expect(events).toContain('triggerFinished');
    expect((await env.queue.get(`${run.id}:build+trigger:1`))?.state).toBe('completed');
    const triggerLog = path.join(
      state.workspace,
      '.phasebridge',
      'runs',
      run.id,
      'logs',
      'triggers',
      'build-1.log',
    );
    expect(fs.readFileSync(triggerLog, 'utf8')).toContain('demo-agent: prompt');
  });
});
