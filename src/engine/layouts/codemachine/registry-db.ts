/**
 * `.codemachine/logs/registry.db`: one row per agent run, in CodeMachine's own tables so its
 * tools can read them. Opened like CodeMachine opens it (WAL, synchronous NORMAL, foreign keys,
 * busy timeout): a CodeMachine process may read it at the same time.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { nativeBindingOption } from '../../../sqlite-addon.ts';
import { prepareSqliteInside } from '../../ledger/safe-path.ts';
import type { Telemetry } from '../../model.ts';
import { agentLogPath, agentLogRelativePath, codemachinePaths } from './paths.ts';
import { type AgentRunStatus, initRegistrySchema } from './registry-schema.ts';

/** A flat agent run, as the `agent_runs` view shows it. */
export interface AgentRunRow {
  id: number;
  name: string;
  engine: string | null;
  status: AgentRunStatus;
  start: string;
  end: string | null;
  duration_ms: number | null;
  prompt: string;
  log_path: string;
  error: string | null;
  tokens_in: number;
  tokens_out: number;
  cached_tokens: number;
  cost: number;
  parent_id: number | null;
  session_id: string | null;
  run_id: string | null;
  step_id: string | null;
  kind: 'step' | 'trigger' | 'skip' | null;
  attempt: number | null;
}

/** A new agent run to record. */
export interface NewAgentRun {
  /** The job it records (`runId:stepId:attempt`, …): unique, so recording twice is a no-op. */
  jobId: string;
  runId: string;
  stepId: string;
  kind: 'step' | 'trigger' | 'skip';
  attempt: number;
  /** The agent's name. */
  name: string;
  engine?: string;
  model?: string;
  status: AgentRunStatus;
  /** ISO start time. */
  start: string;
  prompt: string;
  parentId?: number;
  /** The id to use when it is free (a rebuild restoring the monitoringId the ledger recorded). */
  id?: number;
}

/** The essentials of one recorded run. */
export interface AgentRunRef {
  id: number;
  status: AgentRunStatus;
  start: string;
  name: string;
}

/** CodeMachine stores at most 500 characters of a prompt; the log file has the rest. */
function trimPrompt(prompt: string): string {
  return prompt.length > 500 ? `${prompt.slice(0, 500)}...` : prompt;
}

/** The provider behind an engine kind (CodeMachine's engine_provider); none for a plain command. */
export function engineProvider(engine: string | undefined): string | undefined {
  if (engine === 'claude') return 'anthropic';
  if (engine === 'codex') return 'openai';
  return undefined;
}

const REF = 'a.id AS id, a.status AS status, a.start_time AS start, a.name AS name';

/** An open registry.db; one per projection, closed with {@link RegistryDb.close}. */
export class RegistryDb {
  readonly file: string;
  readonly #db: Database.Database;
  /** Prepared statements by SQL: preparing them on every commit was 7 % of a codemachine commit. */
  readonly #statements = new Map<string, Database.Statement>();

  private constructor(file: string, db: Database.Database) {
    this.file = file;
    this.#db = db;
  }

  /** The statement of `sql`, prepared once per connection. */
  #stmt(sql: string): Database.Statement {
    let stmt = this.#statements.get(sql);
    if (stmt === undefined) {
      stmt = this.#db.prepare(sql);
      this.#statements.set(sql, stmt);
    }
    return stmt;
  }

  /**
   * Opens (creating when missing, mode 0600) the registry of `workspace`. A symlink or hard link
   * planted at the file, its -wal/-shm or a folder on the way throws UnsafePathError.
   */
  static open(workspace: string): RegistryDb {
    const paths = codemachinePaths(workspace);
    const db = new Database(
      prepareSqliteInside(path.dirname(paths.root), paths.registryDb),
      nativeBindingOption(),
    );
    try {
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
      initRegistrySchema(db);
    } catch (err) {
      db.close();
      throw err;
    }
    return new RegistryDb(paths.registryDb, db);
  }

  /**
   * Runs `fn` in a transaction that is always rolled back: what the rows would be, without
   * writing them (no lock is held once this returns).
   */
  rehearse<T>(fn: () => T): T {
    this.#db.exec('BEGIN');
    try {
      return fn();
    } finally {
      this.#db.exec('ROLLBACK');
    }
  }

  /** Runs `fn` in one transaction (all its changes land together or not at all). */
  transaction<T>(fn: () => T): T {
    return this.#db.transaction(fn)();
  }

  /** The run recorded for a job, if any. */
  jobRow(jobId: string): AgentRunRef | undefined {
    return this.#stmt(
      `SELECT ${REF} FROM phasebridge_jobs j JOIN agents a ON a.id = j.agent_id WHERE j.job_id = ?`,
    ).get(jobId) as AgentRunRef | undefined;
  }

  /** The latest attempt recorded for a step of a run (trigger and skip rows excluded). */
  latestStepRow(runId: string, stepId: string): AgentRunRef | undefined {
    return this.#stmt(
      `SELECT ${REF} FROM phasebridge_jobs j JOIN agents a ON a.id = j.agent_id
         WHERE j.run_id = ? AND j.step_id = ? AND j.kind = 'step' ORDER BY j.attempt DESC LIMIT 1`,
    ).get(runId, stepId) as AgentRunRef | undefined;
  }

  /** Records a run (or returns the one already recorded for its job); returns its id. */
  insert(run: NewAgentRun): number {
    return this.transaction(() => {
      const existing = this.jobRow(run.jobId);
      if (existing) return existing.id;
      const wanted = run.id !== undefined && !this.#idTaken(run.id) ? run.id : null;
      const { lastInsertRowid } = this.#stmt(
        `INSERT INTO agents (id, name, engine, engine_provider, model_name, status, parent_id, start_time, prompt, log_path)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '')`,
      ).run(
        wanted,
        run.name,
        run.engine ?? null,
        engineProvider(run.engine) ?? null,
        run.model ?? null,
        run.status,
        run.parentId ?? null,
        run.start,
        trimPrompt(run.prompt),
      );
      const id = Number(lastInsertRowid);
      this.#stmt('UPDATE agents SET log_path = ? WHERE id = ?').run(
        agentLogRelativePath(id, run.name, run.start),
        id,
      );
      this.#stmt(
        'INSERT INTO phasebridge_jobs (job_id, agent_id, run_id, step_id, kind, attempt) VALUES (?, ?, ?, ?, ?, ?)',
      ).run(run.jobId, id, run.runId, run.stepId, run.kind, run.attempt);
      return id;
    });
  }

  #idTaken(id: number): boolean {
    return this.#stmt('SELECT 1 FROM agents WHERE id = ?').get(id) !== undefined;
  }

  /** Sets a run's status (and error, when given). */
  setStatus(id: number, status: AgentRunStatus, error?: string): void {
    this.#stmt(
      'UPDATE agents SET status = ?, error = COALESCE(?, error), updated_at = CURRENT_TIMESTAMP WHERE id = ?',
    ).run(status, error ?? null, id);
  }

  /** Ends a run: status, end time, duration from its start, and the error when it failed. */
  finish(id: number, status: AgentRunStatus, end: string, error?: string): void {
    this.#stmt(
      `UPDATE agents SET status = ?, end_time = ?, error = ?, updated_at = CURRENT_TIMESTAMP,
           duration = MAX(0, CAST(ROUND((julianday(?) - julianday(start_time)) * 86400000) AS INTEGER))
         WHERE id = ?`,
    ).run(status, end, error ?? null, end, id);
  }

  /** Ends a run that a pause cancelled: failed with the pause as its error, pause_count + 1. */
  pause(id: number, end: string, reason: string): void {
    this.finish(id, 'failed', end, `paused: ${reason}`);
    this.#stmt('UPDATE agents SET pause_count = pause_count + 1 WHERE id = ?').run(id);
  }

  /** Records the process id of a run's agent. */
  setPid(id: number, pid: number): void {
    this.#stmt('UPDATE agents SET pid = ? WHERE id = ?').run(pid, id);
  }

  /** Fills a run's engine, provider and model where still unknown (a row the worker created). */
  setEngine(id: number, engine: string | undefined, model: string | undefined): void {
    if (engine === undefined && model === undefined) return;
    this.#stmt(
      `UPDATE agents SET engine = COALESCE(engine, ?), engine_provider = COALESCE(engine_provider, ?),
           model_name = COALESCE(model_name, ?) WHERE id = ?`,
    ).run(engine ?? null, engineProvider(engine) ?? null, model ?? null, id);
  }

  /** The id of the latest row (step attempt or skip) recorded for a step of a run. */
  latestRowId(runId: string, stepId: string): number | undefined {
    const row = this.#stmt(
      `SELECT agent_id AS id FROM phasebridge_jobs WHERE run_id = ? AND step_id = ? AND kind != 'trigger'
         ORDER BY agent_id DESC LIMIT 1`,
    ).get(runId, stepId) as { id: number } | undefined;
    return row?.id;
  }

  /** Records the engine session of a run. */
  setSession(id: number, sessionId: string): void {
    this.#stmt('UPDATE agents SET session_id = ? WHERE id = ?').run(sessionId, id);
  }

  /** Replaces a run's token usage and cost. */
  setTelemetry(id: number, t: Telemetry): void {
    this.#stmt(
      `INSERT INTO telemetry (agent_id, tokens_in, tokens_out, cached_tokens, cost) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT(agent_id) DO UPDATE SET tokens_in = excluded.tokens_in,
           tokens_out = excluded.tokens_out, cached_tokens = excluded.cached_tokens, cost = excluded.cost`,
    ).run(id, t.tokensIn, t.tokensOut, t.cachedTokens, t.costUsd);
  }

  /**
   * Gives run `from` the id `to` (the monitoringId the ledger recorded), when `to` is free: a
   * rebuilt registry then keeps the ids template.json names. Returns false when `to` is taken.
   */
  rekey(from: number, to: number): boolean {
    if (from === to) return true;
    if (this.#idTaken(to)) return false;
    this.transaction(() => {
      // References are checked at commit, after every row points at the new id.
      this.#db.pragma('defer_foreign_keys = ON');
      const row = this.#stmt('SELECT name, start_time FROM agents WHERE id = ?').get(from) as
        | { name: string; start_time: string }
        | undefined;
      if (row === undefined) return;
      this.#stmt('UPDATE agents SET id = ?, log_path = ? WHERE id = ?').run(
        to,
        agentLogRelativePath(to, row.name, row.start_time),
        from,
      );
      this.#stmt('UPDATE telemetry SET agent_id = ? WHERE agent_id = ?').run(to, from);
      this.#stmt('UPDATE phasebridge_jobs SET agent_id = ? WHERE agent_id = ?').run(to, from);
      this.#stmt('UPDATE agents SET parent_id = ? WHERE parent_id = ?').run(to, from);
    });
    return true;
  }

  /** The last ledger seq of `runId` applied here (0 when none). */
  watermark(runId: string): number {
    const row = this.#stmt('SELECT seq FROM phasebridge_runs WHERE run_id = ?').get(runId) as
      | { seq: number }
      | undefined;
    return row?.seq ?? 0;
  }

  /** Records that events up to `seq` of `runId` are applied. */
  setWatermark(runId: string, seq: number): void {
    this.#stmt(
      'INSERT INTO phasebridge_runs (run_id, seq) VALUES (?, ?) ON CONFLICT(run_id) DO UPDATE SET seq = excluded.seq',
    ).run(runId, seq);
  }

  /** Every agent run (of one run when `runId` is given), oldest first. */
  list(runId?: string): AgentRunRow[] {
    const sql = `SELECT * FROM agent_runs ${runId === undefined ? '' : 'WHERE run_id = ?'} ORDER BY id`;
    const stmt = this.#stmt(sql);
    return (runId === undefined ? stmt.all() : stmt.all(runId)) as AgentRunRow[];
  }

  /** Closes the database. */
  close(): void {
    this.#db.close();
  }
}

/** What the job runner needs to log an agent run where CodeMachine's tools look for it. */
export interface AgentRunHandle {
  /** The run's id in registry.db: send it as `sessionInitialized.monitoringId`. */
  monitoringId: number;
  /** Absolute `.codemachine/logs/agent-<id>-<name>-<time>.log` (pass as an extra log file). */
  logPath: string;
}

/**
 * Records a step attempt (or trigger sub-agent) that is about to run, like CodeMachine's
 * `register`, and returns its monitoringId and log path. Idempotent per job: a redelivered job
 * gets the same id and path.
 */
export function registerAgentRun(
  workspace: string,
  run: Omit<NewAgentRun, 'status'>,
): AgentRunHandle {
  const db = RegistryDb.open(workspace);
  try {
    const id = db.insert({ ...run, status: 'running' });
    const row = db.jobRow(run.jobId)!;
    return { monitoringId: id, logPath: agentLogPath(workspace, id, row.name, row.start) };
  } finally {
    db.close();
  }
}
