/**
 * Shared set-up of the orchestrator tests: a temp bridge home with a migrated bridge.db, a
 * workspace, the sqlite job queue on that db, and orchestrators built on them. Agents are the
 * real demo agent (fast: DEMO_AGENT_BEHAVIOUR="sleep=20" unless a prompt says otherwise).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { createRepositories, type Repositories } from '../../../src/db/repositories/index.ts';
import { readLedger } from '../../../src/engine/ledger/ledger-file.ts';
import type { Actor, RunState } from '../../../src/engine/model.ts';
import type { RunLedgerEntry } from '../../../src/engine/store/run-analysis.ts';
import { Orchestrator } from '../../../src/jobs/orchestrator/orchestrator.ts';
import type { OrchestratorOptions } from '../../../src/jobs/orchestrator/types.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import {
  createSqliteQueue,
  type SqliteQueueOptions,
} from '../../../src/jobs/queue/sqlite-driver.ts';
import { createLogger } from '../../../src/log.ts';
import { slow } from '../../support/slowdown.ts';

/** The actor of test commands. */
export const ALICE: Actor = { id: 'cli:alice' };

/** Workflow `gate`: step a, a checkpoint after it, then step b (the approval → spawn path). */
export const GATE_WORKFLOW = `id: gate
steps:
  - id: a
    agent: demo
    prompt: first
    checkpoint:
      when: after
  - id: b
    agent: demo
    prompt: second
`;

/** Fast lease timing for tests that kill workers. */
export const FAST_LEASES: Omit<SqliteQueueOptions, 'db'> = {
  // Scaled: the lease bounds how long a dead worker's job waits to be taken again, and a live
  // worker on a loaded machine must not miss it (an extra retake failed a crash test at load 40).
  leaseMs: slow(600),
  heartbeatMs: 100,
  pollMs: 30,
};

/** A bridge home, workspace, bridge.db and queue; `open` builds orchestrators on them. */
export interface TestEnv {
  dir: string;
  home: string;
  workspace: string;
  dbFile: string;
  db: BridgeDb;
  repos: Repositories;
  queue: JobQueue;
  /** Opens an orchestrator (closed by `dispose` unless closed before). */
  open(opts?: Partial<OrchestratorOptions>): Promise<Orchestrator>;
  /** Writes `<workspace>/workflows/<id>.workflow.yaml`. */
  workflow(id: string, yaml: string): void;
  dispose(): Promise<void>;
}

/**
 * Creates a {@link TestEnv} in a fresh temp folder: the sqlite queue with `queueOpts`, or the
 * queue `makeQueue` opens on the env's bridge.db.
 */
export async function makeEnv(
  queueOpts: Omit<SqliteQueueOptions, 'db'> = {},
  makeQueue?: (db: BridgeDb) => Promise<JobQueue>,
): Promise<TestEnv> {
  // Here, not at import: the slow tier imports this module once per fork and puts each file's
  // env back after it (test/support/shared-fork.ts). A test that set its own keeps it.
  process.env.DEMO_AGENT_BEHAVIOUR ??= 'sleep=20';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-orch-'));
  const home = path.join(dir, 'home');
  const workspace = path.join(dir, 'ws');
  fs.mkdirSync(workspace, { recursive: true });
  const dbFile = path.join(home, 'bridge.db');
  const db = openBridgeDb({ file: dbFile });
  await migrateToLatest(db);
  const queue = makeQueue
    ? await makeQueue(db)
    : createSqliteQueue({ db, pollMs: 30, ...queueOpts });
  const opened: Orchestrator[] = [];
  const log = createLogger({ level: 'silent' });
  return {
    dir,
    home,
    workspace,
    dbFile,
    db,
    repos: createRepositories(db),
    queue,
    async open(opts = {}) {
      const o = await Orchestrator.create({ db, queue, log, home, killGraceMs: 500, ...opts });
      opened.push(o);
      return o;
    },
    workflow(id, yaml) {
      const file = path.join(workspace, 'workflows', `${id}.workflow.yaml`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, yaml);
    },
    async dispose() {
      for (const o of opened) await o.close();
      await queue.close();
      await db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The ledger entries of a run. */
export function ledgerOf(state: Pick<RunState, 'id' | 'workspace'>): RunLedgerEntry[] {
  const file = path.join(state.workspace, '.phasebridge', 'runs', state.id, 'ledger.jsonl');
  return readLedger(file).entries as RunLedgerEntry[];
}

/** Keys that appear more than once in a run's ledger (should be none). */
export function repeatedKeys(entries: readonly RunLedgerEntry[]): string[] {
  const keys = entries.map((e) => e.key);
  return keys.filter((k, i) => keys.indexOf(k) !== i);
}

/** Polls `check` every 20 ms until it returns a value (not undefined/false) or `ms` pass. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  ms = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const until = Date.now() + slow(ms);
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== null && v !== false) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** True while process `pid` runs (a zombie is dead). */
export { processAlive as alive } from '../../support/process-alive.ts';

/** Approves the open checkpoint of a run and waits until it is idle again. */
export async function approve(o: Orchestrator, runId: string, key: string): Promise<RunState> {
  const r = await o.command(runId, key, {
    type: 'answerCheckpoint',
    answer: 'approve',
    actor: ALICE,
  });
  if (!r.ok) throw new Error(`approve refused: ${r.rejection.message}`);
  return o.waitUntilIdle(runId);
}
