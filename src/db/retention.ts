/**
 * Retention of bridge.db: finished jobs and audit rows are kept for a configured time, then
 * dropped (and the bot's run messages, run_messages, after RUN_MESSAGES_KEEP_MS), so the file grows with active work, not history. Audit rows are exported first, as
 * JSON Lines under `<home>/audit/`, and only the rows the export holds (fsynced and renamed into
 * place) are deleted. A crash between the two leaves the rows in place: the next prune writes
 * the same file again (same name: the first row's time and id) with them, so no row is lost and
 * none lands in two exports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { fsyncDir } from '../engine/ledger/atomic-write.ts';
import type { BridgeDb } from './connection.ts';
import type { AnyBridgeDb } from './migrator.ts';
import { RUN_MESSAGES_KEEP_MS } from './repositories/run-messages.ts';

/** How long finished work is kept (ms). */
export interface RetentionPolicy {
  jobsMs: number;
  auditMs: number;
}

/** What a prune removed (or, dry, would remove). */
export interface PruneReport {
  /** Finished jobs deleted. */
  jobs: number;
  /** Audit rows deleted (all of them in `auditExport`). */
  audit: number;
  /** The JSON Lines file the audit rows went to, or null when there were none. */
  auditExport: string | null;
  /** Jobs finished before this time (ms) were candidates. */
  jobsBefore: number;
  /** Audit rows before this time (ms) were candidates. */
  auditBefore: number;
}

/** Options of {@link pruneBridgeDb}. */
export interface PruneOptions {
  policy: RetentionPolicy;
  /** Folder of the audit exports (created 0700; files 0600). */
  exportDir: string;
  now?: number;
  /** Count only: nothing is written or deleted. */
  dryRun?: boolean;
}

/**
 * Jobs that may go: finished before the cutoff, not of a run still unfinished in the index (its
 * reconciliation may need the outcome), and not the holder of the highest outcome or signal seq
 * (the queue numbers the next one from those; pollers would skip a reused number). Plain SQL that
 * both dialects read alike: SQLite runs its compiled text on the raw handle, Postgres through kysely.
 */
const prunableJobs = (before: number) => sql`FROM jobs
  WHERE finished_at IS NOT NULL AND finished_at < ${before}
    AND state IN ('completed', 'failed', 'cancelled')
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = jobs.run_id AND r.finished_at IS NULL)
    AND (outcome_seq IS NULL OR outcome_seq < (SELECT max(outcome_seq) FROM jobs))
    AND (signal_seq IS NULL OR signal_seq < (SELECT max(signal_seq) FROM jobs))`;

/** Audit rows read per query on Postgres (the export never holds a year of audit in memory). */
const AUDIT_PAGE = 1000;

/** Drops finished jobs and old audit rows (exporting those first); reports what went. */
export async function pruneBridgeDb(db: AnyBridgeDb, opts: PruneOptions): Promise<PruneReport> {
  const now = opts.now ?? Date.now();
  const jobsBefore = now - opts.policy.jobsMs;
  const auditBefore = now - opts.policy.auditMs;
  const base = { jobsBefore, auditBefore };
  if (db.dialect === 'sqlite')
    return { ...base, ...pruneSqlite(db, jobsBefore, auditBefore, opts) };
  const k = db.kysely;
  if (opts.dryRun) {
    const jobs = await sql<{ n: number }>`SELECT count(*) AS n ${prunableJobs(jobsBefore)}`.execute(
      k,
    );
    const audit = await k
      .selectFrom('audit')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('at', '<', auditBefore)
      .executeTakeFirstOrThrow();
    return {
      ...base,
      jobs: Number(jobs.rows[0]?.n ?? 0),
      audit: Number(audit.n),
      auditExport: null,
    };
  }
  const deleted = await sql`DELETE ${prunableJobs(jobsBefore)}`.execute(k);
  await k
    .deleteFrom('run_messages')
    .where('created_at', '<', now - RUN_MESSAGES_KEEP_MS)
    .execute();
  const jobs = Number(deleted.numAffectedRows ?? 0);
  const file = new AuditExport(opts.exportDir);
  try {
    let after = -1;
    for (;;) {
      const page = await k
        .selectFrom('audit')
        .selectAll()
        .where('at', '<', auditBefore)
        .where('id', '>', after)
        .orderBy('id')
        .limit(AUDIT_PAGE)
        .execute();
      for (const r of page) file.add(r);
      if (page.length < AUDIT_PAGE) break;
      after = page[page.length - 1]!.id;
    }
  } catch (err) {
    file.abandon();
    throw err;
  }
  const exported = file.finish();
  let audit = 0;
  if (exported !== null) {
    const res = await k
      .deleteFrom('audit')
      .where('id', '<=', exported.lastId)
      .where('at', '<', auditBefore)
      .executeTakeFirst();
    audit = Number(res.numDeletedRows);
  }
  return { ...base, jobs, audit, auditExport: exported?.file ?? null };
}

/** SQLite's prune: synchronous on the raw handle, as it always was. */
function pruneSqlite(
  db: BridgeDb,
  jobsBefore: number,
  auditBefore: number,
  opts: PruneOptions,
): { jobs: number; audit: number; auditExport: string | null } {
  const sqlite = db.sqlite;
  const jobsSql = (verb: string) =>
    sql`${sql.raw(verb)} ${prunableJobs(jobsBefore)}`.compile(db.kysely);
  if (opts.dryRun) {
    const count = jobsSql('SELECT count(*) AS n');
    const jobs = sqlite.prepare(count.sql).get(...count.parameters) as { n: number };
    const audit = sqlite
      .prepare('SELECT count(*) AS n FROM audit WHERE at < ?')
      .get(auditBefore) as { n: number };
    return { jobs: jobs.n, audit: audit.n, auditExport: null };
  }
  const del = jobsSql('DELETE');
  const jobs = sqlite.prepare(del.sql).run(...del.parameters).changes;
  sqlite
    .prepare('DELETE FROM run_messages WHERE created_at < ?')
    .run((opts.now ?? Date.now()) - RUN_MESSAGES_KEEP_MS);
  const exported = exportAuditSqlite(db, auditBefore, opts.exportDir);
  let audit = 0;
  if (exported !== null) {
    audit = sqlite
      .prepare('DELETE FROM audit WHERE id <= ? AND at < ?')
      .run(exported.lastId, auditBefore).changes;
  }
  return { jobs, audit, auditExport: exported?.file ?? null };
}

interface AuditRow {
  id: number;
  at: number;
  actor: string;
  action: string;
  target: string | null;
  chat_ref: string | null;
  outcome: string;
  detail: string | null;
}

/**
 * Every audit row before `before` in one JSON Lines file; returns it and the last id written, or
 * null when there is no such row. Rows are streamed (better-sqlite3's iterator, nothing awaited
 * while it is open): a year of audit never sits in memory at once.
 */
function exportAuditSqlite(
  db: BridgeDb,
  before: number,
  dir: string,
): { file: string; lastId: number } | null {
  const rows = db.sqlite
    .prepare('SELECT * FROM audit WHERE at < ? ORDER BY id')
    .iterate(before) as IterableIterator<AuditRow>;
  const file = new AuditExport(dir);
  try {
    for (const r of rows) file.add(r);
  } catch (err) {
    file.abandon();
    throw err;
  }
  return file.finish();
}

/**
 * One export file, written through a temp file (created at the first row, named after it),
 * fsynced and renamed into place by `finish`.
 */
class AuditExport {
  readonly #dir: string;
  #fd: number | undefined;
  #tmp = '';
  #file = '';
  #lastId = -1;
  #buffer = '';

  constructor(dir: string) {
    this.#dir = dir;
  }

  add(r: AuditRow): void {
    if (this.#fd === undefined) {
      fs.mkdirSync(this.#dir, { recursive: true, mode: 0o700 });
      const stamp = new Date(r.at).toISOString().replace(/[-:.]/g, '');
      this.#file = path.join(this.#dir, `audit-${stamp}-${r.id}.jsonl`);
      this.#tmp = `${this.#file}.tmp-${process.pid}`;
      this.#fd = fs.openSync(this.#tmp, 'w', 0o600);
    }
    this.#buffer += `${JSON.stringify(entryOf(r))}\n`;
    if (this.#buffer.length > 64 * 1024) {
      fs.writeSync(this.#fd, this.#buffer);
      this.#buffer = '';
    }
    this.#lastId = r.id;
  }

  /** Removes the temp file after a failure. */
  abandon(): void {
    if (this.#fd === undefined) return;
    fs.closeSync(this.#fd);
    fs.rmSync(this.#tmp, { force: true });
    this.#fd = undefined;
  }

  /** Fsyncs and renames the file into place; null when no row was added. */
  finish(): { file: string; lastId: number } | null {
    const fd = this.#fd;
    if (fd === undefined) return null;
    try {
      if (this.#buffer !== '') fs.writeSync(fd, this.#buffer);
      fs.fsyncSync(fd);
    } catch (err) {
      this.abandon();
      throw err;
    }
    fs.closeSync(fd);
    this.#fd = undefined;
    fs.renameSync(this.#tmp, this.#file);
    fsyncDir(this.#dir);
    return { file: this.#file, lastId: this.#lastId };
  }
}

/** One exported line: the audit entry as `phasebridge` shows it (ISO time, camelCase). */
function entryOf(r: AuditRow) {
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    actor: r.actor,
    action: r.action,
    target: r.target,
    chatRef: r.chat_ref,
    outcome: r.outcome,
    detail: r.detail,
  };
}
