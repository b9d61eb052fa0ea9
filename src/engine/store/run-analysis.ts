/**
 * Reads a run folder without changing it: the ledger (the truth) replayed into a state, checked
 * against `run.json`, giving what the store must repair (torn tail, stale projections) or why
 * the run is corrupt. Corruption never resets a run: it is reported and the run shown blocked.
 */
import type { Effect, RunEvent } from '../events.ts';
import { evolve } from '../evolve.ts';
import { formatRunJson, readRunJson } from '../layouts/native.ts';
import { readLedger } from '../ledger/ledger-file.ts';
import type { LedgerEntry } from '../ledger/ledger-format.ts';
import type { RunState } from '../model.ts';

/** A ledger line of the engine. */
export type RunLedgerEntry = LedgerEntry<RunEvent, Effect>;

/** Why a run cannot be written: it stays blocked until an explicit repair. */
export interface RunCorruption {
  reason: string;
  /** The bad ledger line (1-based) when a line is to blame. */
  line?: number;
  /** True when `RunStore.repair` can fix it (keep the good ledger prefix, rebuild projections). */
  repairable: boolean;
}

/** What projections need after loading. */
export type ProjectionNeed =
  | { kind: 'current' }
  | { kind: 'stale'; previous: RunState | null; events: RunEvent[]; rebuild: boolean };

/** Everything known about a run folder after reading it. */
export interface RunAnalysis {
  /** Good ledger entries (before any corrupt line). */
  entries: RunLedgerEntry[];
  /** Replayed state; when corrupt, the most advanced known state marked blocked 'corrupt'. */
  state: RunState | null;
  /** Byte length of the good ledger prefix. */
  goodBytes: number;
  /** True when the ledger has a torn last line to truncate away. */
  tornTail: boolean;
  /** Human-readable notes about what was found (and will be repaired). */
  warnings: string[];
  corrupt: RunCorruption | null;
  projection: ProjectionNeed;
}

/** Reads and replays the run in `runDir` (the id is only used in messages). */
export function analyzeRun(runId: string, runDir: string, ledgerFile: string): RunAnalysis {
  const read = readLedger<RunEvent, Effect>(ledgerFile);
  const warnings: string[] = [];
  if (read.tornTail) {
    const t = read.tornTail;
    warnings.push(
      `ledger line ${t.line} was torn by a crash (${t.reason}); its ${t.bytes} bytes are dropped`,
    );
  }
  const runJson = readRunJson(runDir);
  const projectedSeq = runJson.kind === 'ok' ? runJson.state.seq : -1;
  const replay = replayEntries(read.entries, projectedSeq);
  const entries = read.entries.slice(0, replay.goodCount);
  // A line that parses but cannot be replayed ends the good prefix too.
  const goodBytes =
    replay.goodCount === read.entries.length
      ? read.goodBytes
      : (read.ends[replay.goodCount - 1] ?? 0);
  const base = { entries, goodBytes, tornTail: read.tornTail !== undefined };

  let corrupt: RunCorruption | null = null;
  if (read.corrupt) {
    const c = read.corrupt;
    corrupt = {
      line: c.line,
      reason: `ledger line ${c.line} is corrupt: ${c.reason}`,
      repairable: true,
    };
  } else if (replay.failure) {
    corrupt = { ...replay.failure, repairable: true };
  } else if (runJson.kind === 'ok' && runJson.state.seq > (replay.state?.seq ?? 0)) {
    corrupt = {
      reason: `run.json is at seq ${runJson.state.seq} but the ledger ends at seq ${replay.state?.seq ?? 0}: ledger lines are missing`,
      repairable: replay.state !== null,
    };
  }
  if (corrupt) {
    const shown =
      runJson.kind === 'ok' && runJson.state.seq > (replay.state?.seq ?? -1)
        ? runJson.state
        : replay.state;
    const state = shown === null ? null : markCorrupt(shown, corrupt.reason);
    return { ...base, state, warnings, corrupt, projection: { kind: 'current' } };
  }

  const state = replay.state;
  const events = entries.flatMap((e) => e.events);
  let projection: ProjectionNeed = { kind: 'current' };
  const rebuild: ProjectionNeed = { kind: 'stale', previous: null, events, rebuild: true };
  if (state === null) {
    if (runJson.kind === 'corrupt') warnings.push(`${runJson.reason}; the run has no events yet`);
  } else if (runJson.kind === 'missing') {
    warnings.push('run.json was missing; rebuilt from the ledger');
    projection = rebuild;
  } else if (runJson.kind === 'corrupt') {
    warnings.push(`${runJson.reason}; rebuilt from the ledger`);
    projection = rebuild;
  } else if (runJson.state.id !== runId) {
    warnings.push(`run.json names run ${runJson.state.id}; rebuilt from the ledger`);
    projection = rebuild;
  } else if (runJson.state.seq < state.seq) {
    warnings.push(
      `run.json was behind the ledger (seq ${runJson.state.seq} < ${state.seq}); re-projected`,
    );
    projection =
      replay.atProjected === undefined
        ? rebuild
        : {
            kind: 'stale',
            previous: replay.atProjected.state,
            events: entries.slice(replay.atProjected.count).flatMap((e) => e.events),
            rebuild: false,
          };
  } else if (runJson.text !== formatRunJson(state)) {
    warnings.push(`run.json differed from the ledger's state at seq ${state.seq}; rewritten`);
    projection = rebuild;
  }
  return { ...base, state, warnings, corrupt: null, projection };
}

/** A copy of `state` shown as blocked because its files are corrupt. */
export function markCorrupt(state: RunState, reason: string): RunState {
  return { ...state, status: 'blocked', blocked: { kind: 'corrupt', reason } };
}

interface ReplayResult {
  state: RunState | null;
  /** How many entries replayed cleanly. */
  goodCount: number;
  failure?: { line: number; reason: string };
  /** The state right after the entry whose seq equals run.json's seq. */
  atProjected?: { state: RunState | null; count: number };
}

/** Folds entries with evolve, checking each line's seq against the replayed one. */
export function replayEntries(entries: readonly RunLedgerEntry[], projectedSeq = -1): ReplayResult {
  let state: RunState | null = null;
  let atProjected: ReplayResult['atProjected'];
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    let next: RunState | null = state;
    try {
      for (const event of entry.events) next = evolve(next, event);
    } catch (err) {
      const reason = `ledger line ${i + 1} cannot be applied: ${(err as Error).message}`;
      return { state, goodCount: i, failure: { line: i + 1, reason }, atProjected };
    }
    const seq = next?.seq ?? 0;
    if (seq !== entry.seq) {
      const reason = `ledger line ${i + 1} says seq ${entry.seq} but replay gives ${seq}`;
      return { state, goodCount: i, failure: { line: i + 1, reason }, atProjected };
    }
    state = next;
    if (seq === projectedSeq) atProjected = { state, count: i + 1 };
  }
  return { state, goodCount: entries.length, atProjected };
}
