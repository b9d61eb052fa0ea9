/**
 * Retention of bridge.db: finished jobs and audit rows are kept for a configured time, then
 * dropped, so the file grows with active work, not history. Audit rows are exported first, as
 * JSON Lines under `<home>/audit/`, and only the rows the export holds (fsynced and renamed into
 * place) are deleted. A crash between the two leaves the rows in place: the next prune writes
 * the same file again (same name: the first row's time and id) with them, so no row is lost and
 * none lands in two exports.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir } from '../engine/ledger/atomic-write.ts';
import type { BridgeDb } from './connection.ts';

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
 * (the queue numbers the next one from those; pollers would skip a reused number).
 */
const PRUNABLE_JOBS = `FROM jobs
  WHERE finished_at IS NOT NULL AND finished_at < ?
    AND state IN ('completed', 'failed', 'cancelled')
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = jobs.run_id AND r.finished_at IS NULL)
    AND (outcome_seq IS NULL OR outcome_seq < (SELECT max(outcome_seq) FROM jobs))
    AND (signal_seq IS NULL OR signal_seq < (SELECT max(signal_seq) FROM jobs))`;

/** Drops finished jobs and old audit rows (exporting those first); reports what went. */
export function pruneBridgeDb(db: BridgeDb, opts: PruneOptions): PruneReport {
  const now = opts.now ?? Date.now();
  const jobsBefore = now - opts.policy.jobsMs;
  const auditBefore = now - opts.policy.auditMs;
  const sqlite = db.sqlite;
  const base = { jobsBefore, auditBefore };
  if (opts.dryRun) {
    const jobs = sqlite.prepare(`SELECT count(*) AS n ${PRUNABLE_JOBS}`).get(jobsBefore) as {
      n: number;
    };
    const audit = sqlite
      .prepare('SELECT count(*) AS n FROM audit WHERE at < ?')
      .get(auditBefore) as {
      n: number;
    };
    return { ...base, jobs: jobs.n, audit: audit.n, auditExport: null };
  }
  const jobs = sqlite.prepare(`DELETE ${PRUNABLE_JOBS}`).run(jobsBefore).changes;
  const exported = exportAudit(db, auditBefore, opts.exportDir);
  let audit = 0;
  if (exported !== null) {
    audit = sqlite
      .prepare('DELETE FROM audit WHERE id <= ? AND at < ?')
      .run(exported.lastId, auditBefore).changes;
  }
  return { ...base, jobs, audit, auditExport: exported?.file ?? null };
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
 * Writes every audit row before `before` to one JSON Lines file (through a temp file, fsynced,
 * renamed); returns it and the last id written, or null when there is no such row. Rows are
 * streamed: a year of audit never sits in memory at once.
 */
function exportAudit(
  db: BridgeDb,
  before: number,
  dir: string,
): { file: string; lastId: number } | null {
  const rows = db.sqlite
    .prepare('SELECT * FROM audit WHERE at < ? ORDER BY id')
    .iterate(before) as IterableIterator<AuditRow>;
  let fd: number | undefined;
  let tmp = '';
  let file = '';
  let lastId = -1;
  let buffer = '';
  try {
    for (const r of rows) {
      if (fd === undefined) {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const stamp = new Date(r.at).toISOString().replace(/[-:.]/g, '');
        file = path.join(dir, `audit-${stamp}-${r.id}.jsonl`);
        tmp = `${file}.tmp-${process.pid}`;
        fd = fs.openSync(tmp, 'w', 0o600);
      }
      buffer += `${JSON.stringify(entryOf(r))}\n`;
      if (buffer.length > 64 * 1024) {
        fs.writeSync(fd, buffer);
        buffer = '';
      }
      lastId = r.id;
    }
    if (fd === undefined) return null;
    if (buffer !== '') fs.writeSync(fd, buffer);
    fs.fsyncSync(fd);
  } catch (err) {
    if (fd !== undefined) {
      fs.closeSync(fd);
      fs.rmSync(tmp, { force: true });
    }
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, file);
  fsyncDir(dir);
  return { file, lastId };
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
