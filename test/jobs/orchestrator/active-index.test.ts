/**
 * Start-up touches only unfinished runs: the runs index in bridge.db says which those are, and it
 * stays right through start, completion, cancel, a crash before the index row was written and an
 * index row left behind by a crash; finished runs are read only when asked for.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger, type Log } from '../../../src/log.ts';
import { ALICE, approve, makeEnv, type TestEnv } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** A logger whose warn-and-above lines are kept, as parsed objects. */
function recordingLog(): { log: Log; warnings: { msg: string; runId?: string }[] } {
  const warnings: { msg: string; runId?: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) {
        if (line.trim() === '') continue;
        const entry = JSON.parse(line) as { level: number; msg: string; runId?: string };
        if (entry.level >= 40) warnings.push(entry);
      }
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination, pretty: false }), warnings };
}

const runDir = (ws: string, id: string) => path.join(ws, '.phasebridge', 'runs', id);

describe('the active-run index', () => {
  it('follows start, completion and cancel; start-up reads only unfinished runs', async () => {
    env = await makeEnv();
    const first = await env.open();
    const done = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'done',
      actor: ALICE,
    });
    await first.waitUntilIdle(done.id);
    await first.listRuns(); // index writes are batched: this flushes them
    expect((await env.repos.runs.get(done.id))?.status).toBe('awaiting');
    await approve(first, done.id, 'cli:a1');
    const end = await approve(first, done.id, 'cli:a2');
    expect(end.status).toBe('completed');
    const dropped = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'dropped',
      actor: ALICE,
    });
    await first.waitUntilIdle(dropped.id);
    await first.command(dropped.id, 'cli:c', { type: 'cancel', actor: ALICE });
    const waiting = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'waiting',
      actor: ALICE,
    });
    await first.waitUntilIdle(waiting.id);
    await first.listRuns(); // flushes the index writes
    await first.close();

    const rows = await env.repos.runs.list();
    const byId = new Map(rows.map((r) => [r.id, r]));
    expect(byId.get(done.id)).toMatchObject({
      status: 'completed',
      finishedAt: expect.any(Number),
    });
    expect(byId.get(dropped.id)).toMatchObject({
      status: 'cancelled',
      finishedAt: expect.any(Number),
    });
    expect(byId.get(waiting.id)).toMatchObject({ status: 'awaiting', finishedAt: null });

    // Finished runs' ledgers are garbage now: a start-up that read them would say so.
    for (const id of [done.id, dropped.id]) {
      fs.writeFileSync(path.join(runDir(env.workspace, id), 'ledger.jsonl'), 'not json\n');
    }
    const { log, warnings } = recordingLog();
    const second = await env.open({ log });
    expect(warnings).toEqual([]);
    // The unfinished run was reconciled and still works; a finished one is read on demand.
    const next = await approve(second, waiting.id, 'cli:w1');
    expect(next.checkpoint?.stepId).toBe('review');
    await expect(second.getRun(done.id)).rejects.toThrow(/cannot be read/);
  });

  it('indexes a run whose index row a crash never wrote, and corrects a row a crash left stale', async () => {
    env = await makeEnv();
    const first = await env.open();
    const lost = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'lost row',
      actor: ALICE,
    });
    await first.waitUntilIdle(lost.id);
    const stale = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'stale row',
      actor: ALICE,
    });
    await first.waitUntilIdle(stale.id);
    await approve(first, stale.id, 'cli:s1');
    await approve(first, stale.id, 'cli:s2');
    await first.listRuns();
    await first.close();
    // The crash: the row of one run never written, the other's last status update lost.
    env.db.sqlite.prepare('DELETE FROM runs WHERE id = ?').run(lost.id);
    env.db.sqlite
      .prepare("UPDATE runs SET status = 'active', finished_at = NULL WHERE id = ?")
      .run(stale.id);

    const { log, warnings } = recordingLog();
    const second = await env.open({ log });
    await second.listRuns();
    expect(warnings).toEqual([]);
    expect(await env.repos.runs.get(lost.id)).toMatchObject({
      status: 'awaiting',
      finishedAt: null,
    });
    expect(await env.repos.runs.get(stale.id)).toMatchObject({
      status: 'completed',
      finishedAt: expect.any(Number),
    });
    // The run found on disk is driven on as before.
    expect((await approve(second, lost.id, 'cli:l1')).checkpoint?.stepId).toBe('review');
  });

  it("finds a bound workspace's only run, never indexed, so a redelivered /run starts nothing new", async () => {
    env = await makeEnv();
    await env.repos.bindings.bind({ chatRef: 'telegram:-100', workspace: env.workspace });
    const first = await env.open();
    const key = 'telegram:update:4711';
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'only run',
      actor: ALICE,
      key,
    });
    await first.waitUntilIdle(run.id);
    await first.close();
    // The kill: after the run's first ledger line, before its index row. No other run in the
    // workspace, so the index does not name the workspace at all.
    env.db.sqlite.prepare('DELETE FROM runs WHERE id = ?').run(run.id);

    const second = await env.open();
    expect(await env.repos.runs.get(run.id)).toMatchObject({ status: 'awaiting' });
    // The platform redelivers the unconfirmed update: same key, the same run comes back.
    const again = await second.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'only run',
      actor: ALICE,
      key,
    });
    expect(again.id).toBe(run.id);
    expect((await second.listRuns()).map((r) => r.id)).toEqual([run.id]);
  });

  it('an unfinished run another live process holds is left to it, without a warning', async () => {
    env = await makeEnv();
    env.workflow(
      'hang',
      'id: hang\nsteps:\n  - id: work\n    agent: demo\n    prompt: "demo: hang"\n',
    );
    const holder = await env.open();
    const run = await holder.startRun({
      workflow: 'hang',
      workspace: env.workspace,
      spec: 'held',
      actor: ALICE,
    });
    // Running: the holder keeps the run's lock until the step ends.
    for (;;) {
      const s = await holder.getRun(run.id);
      if (s.steps[0]?.status === 'running') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const { log, warnings } = recordingLog();
    const other = await env.open({ log, worker: false });
    expect(warnings).toEqual([]);
    await other.close();
    await holder.command(run.id, 'cli:stop', { type: 'cancel', actor: ALICE });
    expect((await holder.waitUntilIdle(run.id)).status).toBe('cancelled');
  });

  it('an indexed run whose folder is gone is reported once, by name', async () => {
    env = await makeEnv();
    const first = await env.open();
    const run = await first.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'gone',
      actor: ALICE,
    });
    await first.waitUntilIdle(run.id);
    await first.close();
    fs.rmSync(runDir(env.workspace, run.id), { recursive: true });
    const { log, warnings } = recordingLog();
    await env.open({ log });
    expect(warnings).toEqual([
      expect.objectContaining({ msg: 'indexed run not found on disk', runId: run.id }),
    ]);
  });
});
