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
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir, writeFileAtomic } from '../../ledger/atomic-write.ts';
import { openInside, readTextInside, STATE_FILE_MODE } from '../../ledger/safe-path.ts';
import type { RunState } from '../../model.ts';
import type { LayoutProjection, ProjectionContext } from '../port.ts';
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

const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;

/** Writes the session file and appends the ledger rows not yet on disk. */
function projectCodexclaw(state: RunState, ctx: ProjectionContext): void {
  const workspace = path.resolve(ctx.workspace);
  const paths = codexclawPaths(workspace, state.id);
  appendMissingRows(workspace, paths.ledger, state);
  const existing = readTextInside(workspace, paths.session);
  const text = mergeSessionText(existing, sessionState(state));
  if (existing === text) return;
  writeFileAtomic(paths.session, text, { root: workspace, mkdirs: true, mode: STATE_FILE_MODE });
}

/** How many rows of `sessionId` the ledger text holds (unreadable lines are not ours). */
function rowsOf(text: string, sessionId: string): number {
  let n = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      if ((JSON.parse(line) as { sessionId?: unknown }).sessionId === sessionId) n++;
    } catch {
      // A torn or foreign line: codexclaw's readers skip it, so do we.
    }
  }
  return n;
}

function appendMissingRows(workspace: string, file: string, state: RunState): void {
  const moves = state.pabcd?.moves ?? [];
  const existing = readTextInside(workspace, file);
  const done = existing === null ? 0 : rowsOf(existing, codexclawSessionId(state.id));
  if (done >= moves.length) return;
  const rows = moves.slice(done).map((m) => `${JSON.stringify(ledgerEntry(state.id, m))}\n`);
  // A line left without its newline (a writer died mid-row) must not swallow our first row.
  const lead = existing !== null && existing !== '' && !existing.endsWith('\n') ? '\n' : '';
  const fd = openInside(workspace, file, O_WRONLY | O_APPEND | O_CREAT, STATE_FILE_MODE);
  try {
    fs.writeSync(fd, lead + rows.join(''));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  if (existing === null) fsyncDir(path.dirname(file));
}

/** The codexclaw layout projection. */
export const codexclawLayout: LayoutProjection = Object.freeze({
  name: 'codexclaw',
  project: async (state: RunState, ctx: ProjectionContext) => projectCodexclaw(state, ctx),
});
