/**
 * What the codexclaw layout writes, as pure data: the session `State` and the `LedgerEntry` rows
 * of codexclaw's state model (seed 002), derived from a run's phase state.
 */
import path from 'node:path';
import { isTerminal, type RunState } from '../../model.ts';
import {
  initialPabcd,
  type Phase,
  type PhaseFlags,
  type PhaseMove,
  type ScanEvidence,
  storedPhase,
} from '../../pabcd/phases.ts';

/** The layout's folder name inside a workspace. */
export const CODEXCLAW_DIR = '.codexclaw';

/** codexclaw's session `State` (the fields of the seed; others found on disk are kept). */
export interface CodexclawState {
  phase: Phase;
  sessionId: string;
  slug: string;
  updatedAt: string;
  flags: PhaseFlags;
  supersededBy: string | null;
  injectedTurns: string[];
  lastInjectedPhase: Phase | null;
  orchestrationActive: boolean;
  interview: null;
  stopBlockPhase: Phase | null;
  stopBlockCount: number;
}

/** One row of `.codexclaw/ledger.jsonl`. */
export interface CodexclawLedgerEntry {
  ts: string;
  sessionId: string;
  from: Phase | null;
  to: Phase;
  reason: string;
  evidence?: string;
  actor?: 'human' | 'agent';
  override?: boolean;
  scanEvidence?: ScanEvidence;
}

/**
 * The codexclaw session id of a run: codexclaw accepts only ids its path sanitiser leaves
 * unchanged (`[A-Za-z0-9._-]`, no leading or trailing `-`), so the run id is made canonical.
 */
export function codexclawSessionId(runId: string): string {
  const id = runId.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return id === '' ? 'missing' : id;
}

/** Absolute paths of the layout's files for a run. */
export function codexclawPaths(workspace: string, runId: string) {
  const root = path.join(path.resolve(workspace), CODEXCLAW_DIR);
  return {
    root,
    session: path.join(root, 'sessions', `${codexclawSessionId(runId)}.json`),
    ledger: path.join(root, 'ledger.jsonl'),
  };
}

/** The session State of a run (D is shown as IDLE: codexclaw never rests in D). */
export function sessionState(state: RunState): CodexclawState {
  const p = state.pabcd ?? initialPabcd(state.createdAt);
  const phase = storedPhase(p.phase);
  return {
    phase,
    sessionId: codexclawSessionId(state.id),
    // A non-empty slug makes codexclaw demand a goal plan file; runs are not bound to one.
    slug: '',
    updatedAt: p.updatedAt,
    flags: { ...p.flags },
    supersededBy: null,
    injectedTurns: [],
    lastInjectedPhase: null,
    orchestrationActive: phase !== 'IDLE' && !isTerminal(state.status),
    interview: null,
    stopBlockPhase: p.stopBlockPhase === null ? null : storedPhase(p.stopBlockPhase),
    stopBlockCount: p.stopBlockCount,
  };
}

/** A move as codexclaw's ledger row (who moved it stays in our own ledger only). */
export function ledgerEntry(runId: string, m: PhaseMove): CodexclawLedgerEntry {
  const row: CodexclawLedgerEntry = {
    ts: m.at,
    sessionId: codexclawSessionId(runId),
    from: m.from,
    to: m.to,
    reason: m.reason,
  };
  if (m.evidence !== undefined) row.evidence = m.evidence;
  row.actor = m.actor;
  if (m.override !== undefined) row.override = m.override;
  if (m.scanEvidence !== undefined) row.scanEvidence = { ...m.scanEvidence };
  return row;
}

/**
 * The session file's text: our fields over what is on disk, so fields codexclaw (or a newer
 * codexclaw) keeps there survive our rewrites. Unreadable content is replaced.
 */
export function mergeSessionText(existing: string | null, state: CodexclawState): string {
  let base: Record<string, unknown> = {};
  if (existing !== null) {
    try {
      const parsed: unknown = JSON.parse(existing);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) {
        base = parsed as Record<string, unknown>;
      }
    } catch {
      // Not JSON: nothing to keep.
    }
  }
  return `${JSON.stringify({ ...base, ...state }, null, 2)}\n`;
}
