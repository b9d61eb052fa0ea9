/** The built-in demo workflow end to end through the orchestrator, in each layout. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryDb } from '../../../src/engine/layouts/codemachine/registry-db.ts';
import type { Layout } from '../../../src/engine/model.ts';
import type { RunUpdate, StepProgress } from '../../../src/jobs/orchestrator/types.ts';
import { ALICE, approve, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe.each<Layout>(['native', 'codemachine'])('the demo workflow (%s layout)', (layout) => {
  it('plan → checkpoint → approve → build, review → checkpoint → approve → completed', async () => {
    env = await makeEnv();
    const o = await env.open();
    const updates: RunUpdate[] = [];
    const progress: StepProgress[] = [];
    o.onUpdate((u) => {
      updates.push(u);
    });
    o.onProgress((p) => progress.push(p));

    const started = await o.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'Add login\n\nUsers sign in with email.',
      actor: ALICE,
      originChat: 'telegram:42',
      layout,
    });
    expect(started.id).toMatch(/^\d{4}-\d\d-\d\dT\d{6}Z-add-login$/);
    let state = await o.waitUntilIdle(started.id);
    expect(state.status).toBe('awaiting');
    expect(state.checkpoint?.stepId).toBe('plan');
    expect(state.steps[0]).toMatchObject({ status: 'completed', attempt: 1 });
    // The demo agent prints a Claude-like result event: its session_id is the engine's session.
    expect(state.steps[0]!.sessionId).toMatch(/^demo-\d+$/);

    state = await approve(o, started.id, 'cli:approve-plan');
    expect(state.status).toBe('awaiting');
    expect(state.checkpoint?.stepId).toBe('review');
    state = await approve(o, started.id, 'cli:approve-review');
    expect(state.status).toBe('completed');
    expect(state.steps.map((s) => s.status)).toEqual(['completed', 'completed', 'completed']);
    expect(state.steps.every((s) => s.telemetry.tokensOut > 0)).toBe(true);

    // The ledger: one line per key, every step started, sessioned and finished by its job.
    const ledger = ledgerOf(state);
    expect(repeatedKeys(ledger)).toEqual([]);
    for (const step of ['plan', 'build', 'review']) {
      const job = `${started.id}:${step}:1`;
      for (const what of ['started', 'session', 'finished']) {
        expect(ledger.map((e) => e.key)).toContain(`job:${job}:${what}`);
      }
    }
    const runDir = path.join(env.workspace, '.phasebridge', 'runs', started.id);
    const runJson = JSON.parse(fs.readFileSync(path.join(runDir, 'run.json'), 'utf8'));
    expect(runJson).toMatchObject({ status: 'completed', seq: state.seq });

    // The agent read the spec from the layout's spec file; its output is in the step log.
    const planLog = fs.readFileSync(await o.logPath(started.id, 'plan'), 'utf8');
    expect(planLog).toContain('demo-agent: spec: Add login');
    const specFile =
      layout === 'native'
        ? path.join(runDir, 'spec.md')
        : path.join(env.workspace, '.codemachine', 'inputs', 'specification.md');
    expect(fs.readFileSync(specFile, 'utf8')).toContain('Users sign in with email.');

    // The runs index follows every commit.
    const [row] = await o.listRuns({ workspace: env.workspace });
    expect(row).toMatchObject({
      id: started.id,
      status: 'completed',
      layout,
      originChat: 'telegram:42',
      startedBy: 'cli:alice',
    });
    expect(row!.finishedAt).not.toBeNull();
    expect(updates.filter((u) => u.runId === started.id).at(-1)?.state.status).toBe('completed');
    expect(progress).toEqual([]); // the demo agent prints progress only when asked

    if (layout === 'codemachine') {
      const cm = path.join(env.workspace, '.codemachine');
      const template = JSON.parse(fs.readFileSync(path.join(cm, 'template.json'), 'utf8'));
      expect(Object.keys(template.completedSteps).sort()).toEqual(['0', '1', '2']);
      expect(template.notCompletedSteps).toEqual([]);
      const registry = RegistryDb.open(env.workspace);
      try {
        const rows = registry.list(started.id);
        expect(rows.map((r) => [r.step_id, r.status])).toEqual([
          ['plan', 'completed'],
          ['build', 'completed'],
          ['review', 'completed'],
        ]);
        expect(rows.every((r) => r.tokens_out > 0)).toBe(true);
        // template.json names each step's registry row; its agent log got the output.
        for (const [i, r] of rows.entries()) {
          expect(template.completedSteps[String(i)].monitoringId).toBe(r.id);
          expect(fs.readFileSync(path.join(env.workspace, r.log_path), 'utf8')).toContain(
            'demo-agent: prompt',
          );
        }
      } finally {
        registry.close();
      }
    } else {
      expect(state.steps.map((s) => s.monitoringId)).toEqual([1, 2, 3]);
      expect(fs.existsSync(path.join(env.workspace, '.codemachine'))).toBe(false);
    }
  });
});

describe('progress and workflows', () => {
  it('emits ::progress lines of a running step and lists workflows', async () => {
    env = await makeEnv();
    env.workflow(
      'one',
      'id: one\nname: One step\nsteps:\n  - id: only\n    agent: demo\n    prompt: "demo: sleep=200 progress=2"\n',
    );
    const o = await env.open();
    const progress: StepProgress[] = [];
    o.onProgress((p) => progress.push(p));
    const run = await o.startRun({
      workflow: 'one',
      workspace: env.workspace,
      spec: 'x',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    expect(progress.map((p) => p.text)).toEqual(['step 1/2', 'step 2/2']);
    expect(progress[0]).toMatchObject({ runId: run.id, stepId: 'only', attempt: 1 });

    const workflows = await o.listWorkflows(env.workspace);
    expect(workflows.map((w) => [w.id, w.source === 'builtin'])).toEqual([
      ['coordinator', true],
      ['demo', true],
      ['flow-start-issue', true],
      ['one', false],
      ['pabcd', true],
    ]);
  });
});
