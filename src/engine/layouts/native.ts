/**
 * The native layout: `<workspace>/.phasebridge/runs/<id>/` holding `run.json` (a bounded summary
 * of the run, which carries `seq`), `ledger.jsonl` (the source of truth, written by the RunStore)
 * and `logs/`. Written for every run, whatever its layout.
 *
 * run.json is rewritten on every commit, so it holds only what does not grow with the run (no
 * per-step list: a 10,000-step workflow would make every commit rewrite megabytes): the current
 * step, the open checkpoint, the outcome. The whole state comes from replaying the ledger.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  ensureRealDir,
  type StagedWrite,
  stageFileAtomicFast,
  writeFileAtomicAsync,
} from '../ledger/atomic-write.ts';
import { READ_LIMITS, readFdBounded, UnsafePathError } from '../ledger/safe-path.ts';
import type {
  Actor,
  CheckpointState,
  Layout,
  PendingTrigger,
  RunState,
  RunStatus,
  StepState,
} from '../model.ts';
import type { LayoutProjection, ProjectionContext } from './port.ts';

/** File and folder names inside a native run folder. */
export const NATIVE_FILES = Object.freeze({
  runJson: 'run.json',
  ledger: 'ledger.jsonl',
  lock: 'lock',
  logs: 'logs',
});

/** `<workspace>/.phasebridge/runs` (the id must already be validated by the caller). */
export function runsDir(workspace: string): string {
  return path.join(path.resolve(workspace), '.phasebridge', 'runs');
}

/** `<workspace>/.phasebridge/runs/<id>`. */
export function nativeRunDir(workspace: string, runId: string): string {
  return path.join(runsDir(workspace), runId);
}

/** The run.json format written now (1 was the whole RunState; it reads as stale and is rewritten). */
export const RUN_JSON_FORMAT = 2;

/** What run.json holds: the run's summary at `seq`, its size independent of the run's length. */
export interface RunSummary {
  format: typeof RUN_JSON_FORMAT;
  id: string;
  /** Events applied; equals the ledger's last seq once every projection is written. */
  seq: number;
  status: RunStatus;
  layout: Layout;
  workspace: string;
  workflow: { id: string; version: string; file?: string; steps: number };
  startedBy: Actor;
  createdAt: string;
  updatedAt: string;
  cursor: number;
  /** The step at the cursor, as in the state (the others are in the ledger). */
  current: StepState | null;
  checkpoint: CheckpointState | null;
  /** Checkpoints resolved or withdrawn so far (their history is in the ledger). */
  closedCheckpoints: number;
  trigger?: PendingTrigger;
  blocked?: RunState['blocked'];
  outcome?: RunState['outcome'];
}

/** The summary of a state written to run.json. */
export function runSummary(state: RunState): RunSummary {
  const { workflow } = state;
  const summary: RunSummary = {
    format: RUN_JSON_FORMAT,
    id: state.id,
    seq: state.seq,
    status: state.status,
    layout: state.layout,
    workspace: state.workspace,
    workflow: {
      id: workflow.id,
      version: workflow.version,
      ...(workflow.file === undefined ? {} : { file: workflow.file }),
      steps: workflow.steps.length,
    },
    startedBy: state.startedBy,
    createdAt: state.createdAt,
    updatedAt: state.updatedAt,
    cursor: state.cursor,
    current: state.steps[state.cursor] ?? null,
    checkpoint: state.checkpoint,
    closedCheckpoints: state.checkpoints.length,
  };
  if (state.trigger !== undefined) summary.trigger = state.trigger;
  if (state.blocked !== undefined) summary.blocked = state.blocked;
  if (state.outcome !== undefined) summary.outcome = state.outcome;
  return summary;
}

/** The exact text of `run.json` for a state (pretty JSON + newline), so it can be compared. */
export function formatRunJson(state: RunState): string {
  return `${JSON.stringify(runSummary(state), null, 2)}\n`;
}

/**
 * What `run.json` holds: nothing, a run's head (its id and seq, with the parsed object and its
 * text), or something unusable. Only id and seq are checked: the rest is compared as text.
 */
export type RunJsonRead =
  | { kind: 'missing' }
  | { kind: 'ok'; id: string; seq: number; value: Record<string, unknown>; text: string }
  | { kind: 'corrupt'; reason: string };

/** Reads `<runDir>/run.json` without following a symlink; never throws for bad content. */
export function readRunJson(runDir: string): RunJsonRead {
  const file = path.join(runDir, NATIVE_FILES.runJson);
  let text: string;
  try {
    const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
    // O_NONBLOCK: a FIFO in place of run.json must not hang the open (it is refused below).
    const fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    try {
      const st = fs.fstatSync(fd);
      if (!st.isFile()) return { kind: 'corrupt', reason: 'run.json is not a regular file' };
      if (st.nlink > 1) {
        return { kind: 'corrupt', reason: `run.json has ${st.nlink} hard links` };
      }
      text = readFdBounded(fd, READ_LIMITS.state, file).toString('utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    if (err instanceof UnsafePathError) return { kind: 'corrupt', reason: err.message };
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'corrupt', reason: 'run.json is a symlink' };
    if (code === 'EISDIR') return { kind: 'corrupt', reason: 'run.json is not a file' };
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { kind: 'corrupt', reason: `run.json is not valid JSON (${(err as Error).message})` };
  }
  const s = raw as { id?: unknown; seq?: unknown } | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    Array.isArray(s) ||
    typeof s.id !== 'string' ||
    typeof s.seq !== 'number' ||
    !Number.isSafeInteger(s.seq) ||
    s.seq < 0
  ) {
    return { kind: 'corrupt', reason: 'run.json is not a run summary (id, seq)' };
  }
  return { kind: 'ok', id: s.id, seq: s.seq, value: s as Record<string, unknown>, text };
}

/** Writes `run.json` atomically; creates `logs/` on a run's first (or a rebuilt) projection. */
async function projectNative(state: RunState, ctx: ProjectionContext): Promise<void> {
  if (ctx.previous === null || ctx.rebuild) {
    ensureRealDir(path.join(ctx.runDir, NATIVE_FILES.logs), { root: ctx.runDir, mkdirs: true });
  }
  // fsyncs on the thread pool: other runs' commits go on while this one waits for the disk.
  await writeFileAtomicAsync(path.join(ctx.runDir, NATIVE_FILES.runJson), formatRunJson(state), {
    mode: 0o600,
  });
}

/**
 * run.json of `state` written beside its place and fsynced, for a commit to publish once its
 * ledger line is durable (only for a run whose logs/ folder exists: not its first projection).
 */
export function stageRunJson(state: RunState, runDir: string): Promise<StagedWrite> {
  // As the layouts' files: only the fsync on the thread pool (one round trip, not four).
  return stageFileAtomicFast(path.join(runDir, NATIVE_FILES.runJson), formatRunJson(state), {
    mode: 0o600,
  });
}

/** The native layout projection (always applies). */
export const nativeLayout: LayoutProjection = Object.freeze({
  name: 'native',
  appliesTo: () => true,
  project: projectNative,
});
