/**
 * The `coordinator` layout: a run projected into `<workspace>/.coordinator/state.json` as the
 * agile coordinator keeps its session (seed 004), every key of its full schema present. When the
 * run completes, the session is written IDLE and `.coordinator/` is archived as
 * `.coordinator.archive.<unix time>`, or removed when the workflow's `coordinator.onComplete`
 * says `remove` (the seed's two cleanup options). A session of another run (or of the
 * coordinator itself) that is not IDLE is never overwritten: it is an interrupted session to
 * resume, restart or abort first (see sessions.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncDir, writeFileAtomic } from '../../ledger/atomic-write.ts';
import type { DurableBatch } from '../../ledger/durable-batch.ts';
import { lstatNoSymlink, readTextInside, STATE_FILE_MODE } from '../../ledger/safe-path.ts';
import type { RunState } from '../../model.ts';
import { type LayoutProjection, type ProjectionContext, projectThrough } from '../port.ts';
import { coordinatorPaths, coordinatorSessionId, coordinatorState } from './format.ts';

/** The session file's `session_id` and `state`, or null when absent or unreadable. */
export function readSessionHead(
  workspace: string,
): { session_id?: unknown; state?: unknown } | null {
  return sessionHead(readTextInside(workspace, coordinatorPaths(workspace).state));
}

/** The head of a session file's text (null: no file, or not a JSON object). */
function sessionHead(text: string | null): { session_id?: unknown; state?: unknown } | null {
  if (text === null) return null;
  try {
    const doc = JSON.parse(text) as unknown;
    return doc !== null && typeof doc === 'object'
      ? (doc as { session_id?: unknown; state?: unknown })
      : null;
  } catch {
    return null;
  }
}

/** Removes `.coordinator/` (the seed's "Option 2: Remove"); nothing outside it is touched. */
export function removeCoordinator(workspace: string): void {
  const { dir } = coordinatorPaths(workspace);
  // The folder was checked not to be a link above; rmSync does not follow links inside it.
  fs.rmSync(dir, { recursive: true, force: true });
  fsyncDir(path.dirname(dir));
}

/** Moves `.coordinator/` to `.coordinator.archive.<unix time>` (a free name). */
export function archiveCoordinator(workspace: string, at: Date): string {
  const { dir } = coordinatorPaths(workspace);
  let stamp = Math.floor(at.getTime() / 1000);
  let target = `${dir}.archive.${stamp}`;
  while (lstatNoSymlink(target) !== null) target = `${dir}.archive.${++stamp}`;
  fs.renameSync(dir, target);
  fsyncDir(path.dirname(dir));
  return target;
}

function projectCoordinator(state: RunState, workspaceArg: string, io: DurableBatch): void {
  const workspace = path.resolve(workspaceArg);
  const paths = coordinatorPaths(workspace);
  const st = lstatNoSymlink(paths.dir);
  if (st !== null && !st.isDirectory()) throw new Error(`${paths.dir} is not a folder`);
  // Read once: the head is checked and the text compared with the next one.
  const onDisk = readTextInside(workspace, paths.state);
  const head = sessionHead(onDisk);
  const ours = coordinatorSessionId(state.id);
  if (head !== null && head.session_id !== ours && head.state !== 'IDLE') {
    throw new Error(
      `the workspace holds another coordinator session (${String(head.session_id)}, ${String(head.state)}): resume, restart or abort it first`,
    );
  }
  if (state.status === 'completed' && head?.session_id !== ours) return; // archived already
  // The archive below moves the folder once state.json is durable in place: fsynced now.
  if (state.status === 'completed') io.requireDurable();
  const doc = coordinatorState(state);
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  if (onDisk !== text) {
    io.writeFile(paths.state, text, { root: workspace, mkdirs: true, mode: STATE_FILE_MODE });
  }
  if (state.status !== 'completed') return;
  // The IDLE session is archived (or removed) once it is durable in place, never before.
  io.onSettle((published) => {
    if (!published) return;
    if (state.workflow.coordinator?.onComplete === 'remove') removeCoordinator(workspace);
    else archiveCoordinator(workspace, new Date(state.updatedAt));
  });
}

/**
 * The bridge stops while the session is not IDLE: state.json is written again with `updated_at`
 * the stop time, so the session shows when it was last driven (the seed's resume reads it).
 * False when the workspace holds no session of this run.
 */
export function recordCoordinatorSessionEnd(state: RunState, at: string): boolean {
  if (state.layout !== 'coordinator') return false;
  const workspace = path.resolve(state.workspace);
  const head = readSessionHead(workspace);
  if (head === null || head.session_id !== coordinatorSessionId(state.id)) return false;
  const doc = { ...coordinatorState(state), updated_at: at };
  const { state: file } = coordinatorPaths(workspace);
  writeFileAtomic(file, `${JSON.stringify(doc, null, 2)}\n`, {
    root: workspace,
    mode: STATE_FILE_MODE,
  });
  return true;
}

/** The coordinator layout projection. */
export const coordinatorLayout: LayoutProjection = Object.freeze({
  name: 'coordinator',
  stages: true,
  project: (state: RunState, ctx: ProjectionContext) =>
    projectThrough(ctx, (io) => projectCoordinator(state, ctx.workspace, io)),
});
