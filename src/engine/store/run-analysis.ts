/**
 * Reads a run folder without changing it: the ledger (the truth) replayed into a state, checked
 * against `run.json`, giving what the store must repair (torn tail, stale projections) or why
 * the run is corrupt. Corruption never resets a run: it is reported and the run shown blocked.
 */
import path from 'node:path';
import type { Effect, RunEvent } from '../events.ts';
import { evolve } from '../evolve.ts';
import { isLayoutName } from '../layouts/index.ts';
import { formatRunJson, RUN_JSON_FORMAT, readRunJson } from '../layouts/native.ts';
import { type LedgerResume, readLedger } from '../ledger/ledger-file.ts';
import type { LedgerEntry } from '../ledger/ledger-format.ts';
import type { RunState } from '../model.ts';
import { readLayoutMarker } from './layout-marker.ts';

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
  /** The ledger's good prefix replayed; when corrupt, marked blocked 'corrupt' (null: nothing). */
  state: RunState | null;
  /** Byte length of the good prefix. */
  goodBytes: number;
  /** Byte length of the ledger file as read. */
  fileBytes: number;
  /** True when the ledger has a torn last line to truncate away. */
  tornTail: boolean;
  /** Human-readable notes about what was found (and will be repaired). */
  warnings: string[];
  corrupt: RunCorruption | null;
  projection: ProjectionNeed;
  /** The seq run.json is at (null when missing or unreadable). */
  projectedSeq: number | null;
  /** The seq of the layouts' marker (their files may be behind since then), or null. */
  layoutsSince: number | null;
  /** Where a later read of the ledger can go on from (only when the whole ledger was good). */
  resume?: LedgerResume;
}

/**
 * Reads and replays the run in `runDir` (`<workspace>/.phasebridge/runs/<runId>`); `onState`
 * sees the state after each good ledger line (count of lines so far).
 */
export function analyzeRun(
  runId: string,
  runDir: string,
  ledgerFile: string,
  onState?: (count: number, state: RunState) => void,
): RunAnalysis {
  const read = readLedger<RunEvent, Effect>(ledgerFile);
  const warnings: string[] = [];
  if (read.tornTail) {
    const t = read.tornTail;
    warnings.push(
      `ledger line ${t.line} was torn by a crash (${t.reason}); its ${t.bytes} bytes are dropped`,
    );
  }
  const runJson = readRunJson(runDir);
  const projectedSeq = runJson.kind === 'ok' ? runJson.seq : null;
  // A ledger may only describe the run of its own folder: never project into another workspace.
  const owner = { runId, workspace: path.resolve(runDir, '..', '..', '..') };
  // The layouts' files may be behind since the marker's seq: the state there is kept.
  const layoutsSince = readLayoutMarker(runDir);
  let atMarker: { state: RunState; count: number } | undefined;
  const replay = replayEntries(read.entries, projectedSeq ?? -1, owner, (count, state) => {
    if (state.seq === layoutsSince) atMarker = { state, count };
    onState?.(count, state);
  });
  const entries = read.entries.slice(0, replay.goodCount);
  // A line that parses but cannot be replayed ends the good prefix too.
  const goodBytes =
    replay.goodCount === read.entries.length
      ? read.goodBytes
      : (read.ends[replay.goodCount - 1] ?? 0);
  const base: Pick<
    RunAnalysis,
    'entries' | 'goodBytes' | 'fileBytes' | 'tornTail' | 'projectedSeq' | 'layoutsSince' | 'resume'
  > = {
    entries,
    goodBytes,
    fileBytes: read.fileBytes,
    tornTail: read.tornTail !== undefined,
    projectedSeq,
    layoutsSince,
  };

  let corrupt: RunCorruption | null = null;
  const ledgerSeq = replay.state?.seq ?? 0;
  if (read.refused) {
    corrupt = {
      reason: `the ledger is refused: ${read.refused.reason}`,
      repairable: read.refused.readable && replay.state !== null,
    };
  } else if (read.corrupt) {
    const c = read.corrupt;
    corrupt = {
      line: c.line,
      reason: `ledger line ${c.line} is corrupt: ${c.reason}`,
      repairable: replay.state !== null,
    };
  } else if (replay.failure) {
    corrupt = { ...replay.failure, repairable: replay.state !== null };
  } else if (projectedSeq !== null && projectedSeq > ledgerSeq) {
    corrupt = {
      reason: `run.json is at seq ${projectedSeq} but the ledger ends at seq ${ledgerSeq}: ledger lines are missing`,
      repairable: replay.state !== null,
    };
  }
  if (!corrupt && read.resume && replay.goodCount === read.entries.length) {
    base.resume = read.resume;
  }
  if (corrupt) {
    // The ledger's good prefix is what a repair keeps: shown blocked, never a projection's view.
    const state = replay.state === null ? null : markCorrupt(replay.state, corrupt.reason);
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
  } else if (runJson.id !== runId) {
    warnings.push(`run.json names run ${runJson.id}; rebuilt from the ledger`);
    projection = rebuild;
  } else if (runJson.seq < state.seq) {
    warnings.push(
      `run.json was behind the ledger (seq ${runJson.seq} < ${state.seq}); re-projected`,
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
    warnings.push(
      runJson.value.format === RUN_JSON_FORMAT
        ? `run.json differed from the ledger's state at seq ${state.seq}; rewritten`
        : `run.json had an older format; rewritten as the run's summary at seq ${state.seq}`,
    );
    projection = rebuild;
  }
  if (state !== null && layoutsSince !== null && layoutsSince < state.seq) {
    projection = behindMarker(projection, layoutsSince, atMarker, entries, rebuild);
  }
  return { ...base, state, warnings, corrupt: null, projection };
}

/**
 * The projection needed when the layouts' files may be behind since `since` (a marker left by
 * a stop before they were flushed, or by a process holding the run now): re-projected from the
 * state there, unless `need` already goes back further (a rebuild, or run.json behind it). No
 * warning: like a journal's replay, this is the routine way back after a stop.
 */
function behindMarker(
  need: ProjectionNeed,
  since: number,
  at: { state: RunState; count: number } | undefined,
  entries: readonly RunLedgerEntry[],
  rebuild: ProjectionNeed,
): ProjectionNeed {
  if (need.kind === 'stale' && (need.rebuild || (need.previous?.seq ?? 0) <= since)) return need;
  if (at === undefined) return rebuild;
  const events = entries.slice(at.count).flatMap((e) => e.events);
  return { kind: 'stale', previous: at.state, events, rebuild: false };
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

/** The run a ledger must describe. */
export interface LedgerOwner {
  runId: string;
  /** Absolute workspace folder. */
  workspace: string;
}

/**
 * Folds entries with evolve, checking each line's seq against the replayed one, that the run is
 * `owner`'s (when given) and that the result is shaped like a run. `onState` sees every state.
 */
export function replayEntries(
  entries: readonly RunLedgerEntry[],
  projectedSeq = -1,
  owner?: LedgerOwner,
  onState?: (count: number, state: RunState) => void,
  from: RunState | null = null,
): ReplayResult {
  // `from`: the state the entries go on from (a resumed read); the owner was checked on line 1.
  let state: RunState | null = from;
  let atProjected: ReplayResult['atProjected'];
  const fail = (i: number, why: string): ReplayResult => {
    const failure = { line: i + 1, reason: `ledger line ${i + 1} ${why}` };
    return { state, goodCount: i, failure, atProjected };
  };
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    let next: RunState | null = state;
    try {
      for (const event of entry.events) next = evolve(next, event);
    } catch (err) {
      return fail(i, `cannot be applied: ${(err as Error).message}`);
    }
    const seq = next?.seq ?? 0;
    if (seq !== entry.seq) return fail(i, `says seq ${entry.seq} but replay gives ${seq}`);
    if (next !== null) {
      // The start line shapes the whole run (checked in full once); later lines only its head.
      const wrong = state === null ? (wrongOwner(next, owner) ?? oddStart(next)) : oddHead(next);
      if (wrong !== null) return fail(i, wrong);
    }
    state = next;
    if (state !== null) onState?.(i + 1, state);
    if (seq === projectedSeq) atProjected = { state, count: i + 1 };
  }
  return { state, goodCount: entries.length, atProjected };
}

function wrongOwner(state: RunState, owner: LedgerOwner | undefined): string | null {
  if (owner === undefined) return null;
  if (state.id !== owner.runId) return `starts run ${String(state.id)}, not ${owner.runId}`;
  if (typeof state.workspace !== 'string' || path.resolve(state.workspace) !== owner.workspace) {
    return `starts the run in workspace ${String(state.workspace)}, not ${owner.workspace}`;
  }
  return null;
}

/**
 * What is wrong with the shape of a run's first state, or null. Lines are checked only shallowly
 * on read, so a forged start line can fold into nonsense evolve does not notice: refuse it here.
 */
function oddStart(s: RunState): string | null {
  const wf = s.workflow as Partial<RunState['workflow']> | null;
  if (typeof wf !== 'object' || wf === null || typeof wf.id !== 'string') return 'has no workflow';
  if (!Array.isArray(wf.steps) || !Array.isArray(s.steps) || wf.steps.length !== s.steps.length) {
    return 'has no workflow steps';
  }
  for (const [i, def] of (wf.steps as unknown[]).entries()) {
    const d = def as Partial<RunState['workflow']['steps'][number]> | null;
    if (typeof d !== 'object' || d === null || typeof d.id !== 'string') {
      return `has a workflow step ${i} without an id`;
    }
    if (typeof d.agent !== 'string' || typeof d.prompt !== 'string') {
      return `has a workflow step ${d.id} without an agent or a prompt`;
    }
  }
  // Any layout of the table (codexclaw runs were refused on read before it was one).
  if (!isLayoutName(s.layout)) return `has layout ${String(s.layout)}`;
  if (typeof s.startedBy !== 'object' || s.startedBy === null) return 'has no startedBy';
  if (typeof s.spec !== 'string' || !Array.isArray(s.selectedConditions)) {
    return 'has no spec or selected conditions';
  }
  return oddHead(s);
}

const STATUSES = new Set(['active', 'awaiting', 'blocked', 'completed', 'failed', 'cancelled']);

/** What is wrong with the run-level fields of a state (cheap: checked after every line). */
function oddHead(s: RunState): string | null {
  if (!STATUSES.has(s.status)) return `leaves the run in status ${String(s.status)}`;
  if (!Number.isSafeInteger(s.cursor) || s.cursor < 0 || s.cursor > s.steps.length) {
    return `leaves the cursor at ${String(s.cursor)}`;
  }
  if (typeof s.checkpoint !== 'object' || !Array.isArray(s.checkpoints)) {
    return 'leaves checkpoints that are not objects';
  }
  if (typeof s.updatedAt !== 'string') return 'has no time';
  return null;
}

/** States are kept every this many ledger lines, so an old duplicate key replays only a few lines. */
export const SNAPSHOT_EVERY = 256;

/** The state after the first `count` of `entries`, replayed from the nearest of `snapshots`. */
export function stateAfterLines(
  entries: readonly RunLedgerEntry[],
  snapshots: ReadonlyMap<number, RunState>,
  count: number,
): RunState | null {
  let from = Math.floor(count / SNAPSHOT_EVERY) * SNAPSHOT_EVERY;
  let state = from === 0 ? null : (snapshots.get(from) ?? null);
  if (state === null) from = 0;
  for (const entry of entries.slice(from, count)) {
    for (const event of entry.events) state = evolve(state, event);
  }
  return state;
}
