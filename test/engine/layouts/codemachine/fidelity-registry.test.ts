/**
 * Issue 18 items 3 and 7: registry.db rows carry what we know (engine, provider, pid, the error
 * of an `error` directive, the seed's statuses only), and template.json names the row of a step
 * skipped before it ran.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import {
  RegistryDb,
  registerAgentRun,
} from '../../../../src/engine/layouts/codemachine/registry-db.ts';
import { stepJobId } from '../../../../src/engine/model.ts';
import { RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

const GOLDEN = path.join(import.meta.dirname, 'golden', 'fidelity');

function rows(ws: string): Record<string, unknown>[] {
  const db = new Database(codemachinePaths(ws).registryDb, { readonly: true });
  try {
    return db
      .prepare(
        'SELECT id, name, engine, engine_provider, model_name, status, error, pid, pause_count FROM agents ORDER BY id',
      )
      .all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const AGENTS: Record<string, { engine: string; model?: string }> = {
  planner: { engine: 'claude', model: 'opus' },
  coder: { engine: 'codex' },
  reviewer: { engine: 'command' },
};

describe('registry.db and template.json ids (issue 18)', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness({ agentInfo: (id) => AGENTS[id] });
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('names the skipped row in monitoringId of a step skipped before it ran (golden)', async () => {
    await h.d.start({ selectedTrack: 'quick' });
    await h.d.send({ type: 'skip', reason: 'planned by hand' });
    const file = codemachinePaths(h.ws).template;
    const doc = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(doc.completedSteps['0'].monitoringId).toBe(1);
    expect(rows(h.ws)[0]).toMatchObject({ id: 1, status: 'skipped', name: 'planner' });
    const golden = path.join(GOLDEN, '03-skipped-monitoring-id.golden.json');
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(golden, fs.readFileSync(file));
    expect(fs.readFileSync(file, 'utf8')).toBe(fs.readFileSync(golden, 'utf8'));
  });

  it('fills engine, provider and model of a row the worker created, and its pid', async () => {
    await h.d.start();
    await h.d.send({ type: 'stepStarted', stepId: 'plan', attempt: 1 });
    // The worker registers first in real runs; here the projection made the row: both get engine.
    const { monitoringId } = registerAgentRun(h.ws, {
      jobId: stepJobId(RUN_ID, 'plan', 1),
      runId: RUN_ID,
      stepId: 'plan',
      kind: 'step',
      attempt: 1,
      name: 'planner',
      start: h.d.now(),
      prompt: 'Plan the change.',
    });
    const db = RegistryDb.open(h.ws);
    try {
      db.setPid(monitoringId, 4242);
    } finally {
      db.close();
    }
    expect(rows(h.ws)[0]).toMatchObject({
      engine: 'claude',
      engine_provider: 'anthropic',
      model_name: 'opus',
      pid: 4242,
    });
  });

  it('fills engine and provider when the worker registered the row before the start', async () => {
    await h.d.start();
    registerAgentRun(h.ws, {
      jobId: stepJobId(RUN_ID, 'plan', 1),
      runId: RUN_ID,
      stepId: 'plan',
      kind: 'step',
      attempt: 1,
      name: 'planner',
      start: h.d.now(),
      prompt: 'Plan the change.',
    });
    expect(rows(h.ws)[0]).toMatchObject({ engine: null });
    await h.d.started('plan');
    expect(rows(h.ws)[0]).toMatchObject({ engine: 'claude', engine_provider: 'anthropic' });
  });

  it('records an `error` directive as a failed run with its reason', async () => {
    await h.d.start();
    await h.d.started('plan');
    await h.d.finished('plan', { action: 'error', reason: 'spec contradicts itself' });
    expect(h.d.run.status).toBe('failed');
    expect(rows(h.ws)[0]).toMatchObject({ status: 'failed', error: 'spec contradicts itself' });
  });

  it('never writes `paused`: a paused attempt ends failed, pause_count 1', async () => {
    await h.d.start();
    await h.d.started('plan');
    await h.d.send({ type: 'pause', reason: 'lunch' });
    await h.d.send({ type: 'resume' });
    await h.d.started('plan');
    expect(rows(h.ws).map((r) => [r.status, r.error, r.pause_count])).toEqual([
      ['failed', 'paused: paused by alice', 1],
      ['running', null, 0],
    ]);
  });
});
