/**
 * Issue 19 deliverable 3 for the codemachine layout: a step run by a `phasebridge worker` with an
 * empty home in git workspace mode (real worker process, BullMQ on a private redis-server, a
 * local bare repository) leaves in the bridge's workspace what a local step leaves: its row in
 * `.codemachine/logs/registry.db` (engine, provider, model, pid, final status and error) and its
 * `agent-<id>-….log` (the prompt first, then the agent's output), written by the bridge.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Orchestrator } from '../../../src/jobs/orchestrator/orchestrator.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import { slow } from '../../support/slowdown.ts';
import { ALICE, makeEnv, type TestEnv } from '../orchestrator/helpers.ts';
import {
  bridgeQueue,
  ensureBuilt,
  GIT_AGENT,
  gitFixture,
  startWorker,
  type WorkerProcess,
} from './support.ts';

const availability = redisAvailable();
const TIMEOUT = slow(90_000);

/** A step that succeeds, then one that fails (its file is missing): exit code 3. */
const WORKFLOW = [
  'id: cm',
  'steps:',
  '  - id: make',
  '    agent: gitagent',
  `    prompt: ${JSON.stringify('say hello from the agent\nwrite made.txt done')}`,
  '  - id: check',
  '    agent: gitagent',
  `    prompt: ${JSON.stringify('say checking\nneed nowhere.txt')}`,
  '',
].join('\n');

interface Row {
  id: number;
  name: string;
  engine: string | null;
  engine_provider: string | null;
  model_name: string | null;
  status: string;
  error: string | null;
  pid: number | null;
  log_path: string;
  step_id: string;
  end_time: string | null;
}

/** The registry rows of a workspace, oldest first. */
function registryRows(workspace: string): Row[] {
  const file = path.join(workspace, '.codemachine', 'logs', 'registry.db');
  const db = new Database(file, { readonly: true });
  try {
    return db
      .prepare(
        `SELECT a.id, a.name, a.engine, a.engine_provider, a.model_name, a.status, a.error, a.pid,
           a.log_path, a.end_time, j.step_id FROM agents a JOIN phasebridge_jobs j ON j.agent_id = a.id
         ORDER BY a.id`,
      )
      .all() as Row[];
  } finally {
    db.close();
  }
}

/** What must match between a local and a remote row (pid and times differ by nature). */
function comparable(r: Row) {
  return {
    id: r.id,
    step: r.step_id,
    name: r.name,
    engine: r.engine,
    provider: r.engine_provider,
    model: r.model_name,
    status: r.status,
    error: r.error,
    ended: r.end_time !== null,
    hasPid: (r.pid ?? 0) > 0,
  };
}

/** An agent log's text with what differs per machine and per moment masked. */
function masked(text: string, runId: string): string {
  return text
    .replaceAll(runId, '<run>')
    .replace(/\[phasebridge\] \S+ (start|end) /g, '[phasebridge] <time> $1 ')
    .replace(/duration=\d+ms/g, 'duration=<ms>')
    .replace(/cwd=\S+/g, 'cwd=<dir>')
    .replace(/pid=\d+/g, 'pid=<pid>')
    .replace(/argv=\[.*\]/g, 'argv=<argv>');
}

/** Runs the workflow on the codemachine layout until idle; returns the run id. */
async function runIt(env: TestEnv, o: Orchestrator): Promise<string> {
  env.workflow('cm', WORKFLOW);
  const run = await o.startRun({
    workflow: 'cm',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
    layout: 'codemachine',
  });
  await o.waitUntilIdle(run.id);
  return run.id;
}

const AGENT = {
  name: 'gitagent',
  engine: 'command' as const,
  argv: [process.execPath, GIT_AGENT],
  model: 'scripted-1',
};

if (availability.ok || inCi()) {
  describe('remote codemachine steps (git mode)', () => {
    let redis: RedisHandle;
    const envs: TestEnv[] = [];
    const workers: WorkerProcess[] = [];
    beforeAll(async () => {
      ensureBuilt();
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    afterEach(async () => {
      for (const w of workers.splice(0)) {
        if (w.child.exitCode === null && w.child.signalCode === null) await w.stop();
      }
      for (const e of envs.splice(0)) await e.dispose();
    });

    it('the bridge writes the registry row and agent log of a remote step, as a local step has them', {
      timeout: TIMEOUT,
    }, async () => {
      // The same workflow run locally (the bridge's own worker, the workspace on its disk) …
      const local = await makeEnv();
      envs.push(local);
      await local.repos.agents.add(AGENT);
      const localRun = await runIt(local, await local.open());

      // … and on a remote worker with an empty home, in git mode.
      const remote = await makeEnv({}, () => bridgeQueue(redis.url));
      envs.push(remote);
      gitFixture(remote.dir, remote.workspace);
      await remote.repos.agents.add(AGENT);
      const o = await remote.open({ worker: false, workspaceMode: 'git' });
      const w = await startWorker(redis.url, path.join(remote.dir, 'w1'));
      workers.push(w);
      const remoteRun = await runIt(remote, o);
      expect(fs.existsSync(path.join(w.home, 'bridge.db'))).toBe(false);

      const rows = registryRows(remote.workspace);
      expect(rows.map((r) => [r.step_id, r.status])).toEqual([
        ['make', 'completed'],
        ['check', 'failed'],
      ]);
      const [make, check] = rows as [Row, Row];
      expect(make).toMatchObject({ name: 'gitagent', engine: 'command', model_name: 'scripted-1' });
      expect(make.pid).toBeGreaterThan(0);
      expect(check.error).toMatch(/3/); // the agent's exit code, as the ledger's stepFailed says
      // Exactly what a local step records (ids, agent, engine, model, status, error).
      expect(rows.map(comparable)).toEqual(registryRows(local.workspace).map(comparable));

      for (const row of rows) {
        // The agent log the row names: the prompt first, then the agent's output.
        const file = path.join(remote.workspace, row.log_path);
        const text = fs.readFileSync(file, 'utf8');
        const prompt = row.step_id === 'make' ? 'say hello from the agent' : 'say checking';
        const at = text.indexOf(`[phasebridge] prompt:\n${prompt}`);
        expect(at).toBeGreaterThan(0);
        expect(text.indexOf('[phasebridge] end of prompt')).toBeGreaterThan(at);
        const said = row.step_id === 'make' ? 'hello from the agent' : 'missing nowhere.txt';
        expect(text.lastIndexOf(said)).toBeGreaterThan(text.indexOf('[phasebridge] end of prompt'));
        // The remote worker's folder, seen in the log, is not the bridge's workspace.
        expect(text).toContain(`cwd=${path.join(w.home, 'work', 'runs', remoteRun)}`);
        expect((fs.statSync(file).mode & 0o777).toString(8)).toBe('600');
        // The same text as the step log the bridge wrote from the same chunks.
        expect(text).toBe(fs.readFileSync(await o.logPath(remoteRun, row.step_id), 'utf8'));
        // And the same lines as the local step's agent log, up to times, folders and pids.
        const localRow = registryRows(local.workspace).find((r) => r.step_id === row.step_id)!;
        const localText = fs.readFileSync(path.join(local.workspace, localRow.log_path), 'utf8');
        expect(masked(text, remoteRun)).toBe(masked(localText, localRun));
      }
    });
  });
} else {
  describe('remote codemachine steps (git mode)', () => {
    it.skip('needs redis-server (apt-get install -y redis-server, or set REDIS_URL)', () => {});
  });
  process.stderr.write(NO_REDIS_BANNER);
}
