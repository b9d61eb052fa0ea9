/**
 * The `codexclaw` layout: a run's PABCD phases projected into `<workspace>/.codexclaw/` as
 * codexclaw's own tools read them (seed 002): `sessions/<session id>.json` holding the session
 * `State`, and `ledger.jsonl`, one `LedgerEntry` per phase change.
 *
 * ledger.jsonl is shared with codexclaw's other sessions and is append-only, so it is never
 * rewritten: the rows of our session already there are counted and only the missing ones are
 * appended (idempotent after a crash). Every path is opened without following symlinks; files
 * are 0600, folders 0700.
 */
import path from 'node:path';
import type { DurableBatch } from '../../ledger/durable-batch.ts';
import { readTextInside, STATE_FILE_MODE } from '../../ledger/safe-path.ts';
import type { RunState } from '../../model.ts';
import { fileIdentity, knownFile, rememberFile } from '../known-files.ts';
import { type LayoutProjection, type ProjectionContext, projectThrough } from '../port.ts';
import {
  codexclawPaths,
  codexclawSessionId,
  ledgerEntry,
  mergeSessionText,
  sessionState,
} from './format.ts';

export {
  CODEXCLAW_DIR,
  type CodexclawLedgerEntry,
  type CodexclawState,
  codexclawPaths,
  codexclawSessionId,
  ledgerEntry,
  sessionState,
} from './format.ts';

/** Stages the session file and the ledger rows not yet on disk. */
function projectCodexclaw(state: RunState, ctx: ProjectionContext, io: DurableBatch): void {
  const workspace = path.resolve(ctx.workspace);
  const paths = codexclawPaths(workspace, state.id);
  appendMissingRows(workspace, paths.ledger, state, io);
  const existing = readTextInside(workspace, paths.session);
  const text = mergeSessionText(existing, sessionState(state));
  if (existing === text) return;
  io.writeFile(paths.session, text, { root: workspace, mkdirs: true, mode: STATE_FILE_MODE });
}

/** How many rows of each session the ledger text holds (unreadable lines are no one's). */
function rowsBySession(text: string): Map<string, number> {
  const rows = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const id = (JSON.parse(line) as { sessionId?: unknown }).sessionId;
      if (typeof id === 'string') rows.set(id, (rows.get(id) ?? 0) + 1);
    } catch {
      // A torn or foreign line: codexclaw's readers skip it, so do we.
    }
  }
  return rows;
}

/**
 * What the shared ledger.jsonl held when last read or appended to by this process: whether it
 * existed and ended in a newline, and each session's row count. The file is shared and only
 * grows, so re-reading and re-parsing it on every commit would cost more and more.
 */
interface KnownLedger {
  exists: boolean;
  endsWithNewline: boolean;
  rows: Map<string, number>;
}

/** The ledger's rows per session (from memory when the file is as this process last saw it). */
function readLedgerRows(workspace: string, file: string): KnownLedger {
  const known = knownFile<KnownLedger>(file);
  if (known !== undefined) return known.value;
  const before = fileIdentity(file);
  const text = readTextInside(workspace, file);
  const read: KnownLedger = {
    exists: text !== null,
    endsWithNewline: text === null || text === '' || text.endsWith('\n'),
    rows: text === null ? new Map() : rowsBySession(text),
  };
  if (text !== null) rememberFile(file, Buffer.byteLength(text), read, before);
  return read;
}

function appendMissingRows(
  workspace: string,
  file: string,
  state: RunState,
  io: DurableBatch,
): void {
  const moves = state.pabcd?.moves ?? [];
  const sessionId = codexclawSessionId(state.id);
  const before = fileIdentity(file);
  const ledger = readLedgerRows(workspace, file);
  const done = ledger.rows.get(sessionId) ?? 0;
  if (done >= moves.length) return;
  const rows = moves.slice(done).map((m) => `${JSON.stringify(ledgerEntry(state.id, m))}\n`);
  // A line left without its newline (a writer died mid-row) must not swallow our first row.
  const text = (ledger.endsWithNewline ? '' : '\n') + rows.join('');
  // Appended (and fsynced) only once the run's own ledger line is durable: rows cannot be taken back.
  io.append(file, text, { root: workspace, mode: STATE_FILE_MODE });
  io.onSettle((published) => {
    if (!published) return;
    const rowsNow = new Map(ledger.rows).set(sessionId, done + rows.length);
    const size = (before?.size ?? 0) + Buffer.byteLength(text);
    rememberFile(file, size, { exists: true, endsWithNewline: true, rows: rowsNow });
  });
}

/** The codexclaw layout projection. */
export const codexclawLayout: LayoutProjection = Object.freeze({
  name: 'codexclaw',
  stages: true,
  project: (state: RunState, ctx: ProjectionContext) =>
    projectThrough(ctx, (io) => projectCodexclaw(state, ctx, io)),
});
