/**
 * The native layout: `<workspace>/.phasebridge/runs/<id>/` holding `run.json` (the RunState,
 * which carries `seq`), `ledger.jsonl` (the source of truth, written by the RunStore) and `logs/`.
 * Written for every run, whatever its layout.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ensureRealDir, writeFileAtomic } from '../ledger/atomic-write.ts';
import type { RunState } from '../model.ts';
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

/** The exact text of `run.json` for a state (pretty JSON + newline), so it can be compared. */
export function formatRunJson(state: RunState): string {
  return `${JSON.stringify(state, null, 2)}\n`;
}

/** What `run.json` holds: nothing, a state (with its text), or something unusable. */
export type RunJsonRead =
  | { kind: 'missing' }
  | { kind: 'ok'; state: RunState; text: string }
  | { kind: 'corrupt'; reason: string };

/** Reads `<runDir>/run.json` without following a symlink; never throws for bad content. */
export function readRunJson(runDir: string): RunJsonRead {
  const file = path.join(runDir, NATIVE_FILES.runJson);
  let text: string;
  try {
    const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
    try {
      text = fs.readFileSync(fd, 'utf8');
    } finally {
      fs.closeSync(fd);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { kind: 'missing' };
    if (code === 'ELOOP') return { kind: 'corrupt', reason: 'run.json is a symlink' };
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { kind: 'corrupt', reason: `run.json is not valid JSON (${(err as Error).message})` };
  }
  const s = raw as Partial<RunState> | null;
  if (
    typeof s !== 'object' ||
    s === null ||
    typeof s.id !== 'string' ||
    typeof s.seq !== 'number' ||
    !Array.isArray(s.steps)
  ) {
    return { kind: 'corrupt', reason: 'run.json is not a run state (id, seq, steps)' };
  }
  return { kind: 'ok', state: s as RunState, text };
}

/** Writes `run.json` atomically; creates `logs/` on a run's first (or a rebuilt) projection. */
async function projectNative(state: RunState, ctx: ProjectionContext): Promise<void> {
  if (ctx.previous === null || ctx.rebuild) {
    ensureRealDir(path.join(ctx.runDir, NATIVE_FILES.logs), { root: ctx.runDir, mkdirs: true });
  }
  writeFileAtomic(path.join(ctx.runDir, NATIVE_FILES.runJson), formatRunJson(state), {
    mode: 0o600,
  });
}

/** The native layout projection (always applies). */
export const nativeLayout: LayoutProjection = Object.freeze({
  name: 'native',
  appliesTo: () => true,
  project: projectNative,
});
