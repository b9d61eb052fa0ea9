/**
 * A run's projection staged with its ledger line, then published (open-run.ts has the commit
 * order). Before the line is written, run.json's temp file and the other layouts' files (those
 * that declare `stages`, each in a DurableBatch) are written beside their places; their fsyncs
 * start after the line is written, beside its own. Once the line is durable the layouts' batches are published together (renames, appends,
 * one round of folder fsyncs), then run.json is renamed (never ahead of the ledger or of another
 * layout). What fails is discarded, and the projection stays stale.
 */
import path from 'node:path';
import { NATIVE_FILES, stageRunJson } from '../layouts/native.ts';
import type { LayoutProjection, ProjectionContext } from '../layouts/port.ts';
import { ensureRealDir, type StagedWrite } from '../ledger/atomic-write.ts';
import { DurableBatch } from '../ledger/durable-batch.ts';
import type { RunState } from '../model.ts';
import type { LayoutDurability } from './layout-marker.ts';

/** What a staged projection is told (the store adds its own folders and the batch). */
export type StageContext = Omit<ProjectionContext, 'runDir' | 'workspace' | 'io'>;

/** One layout's projection of a state, staged in its batch (`done`: staging finished). */
export interface StagedLayout {
  layout: LayoutProjection;
  io: DurableBatch;
  done: Promise<void>;
}

/** A state's projection staged with its ledger line (see OpenRun.commit). */
export interface Staged {
  ctx: StageContext;
  /** run.json written beside its place; null when it is written whole (logs/ made first). */
  runJson: Promise<StagedWrite> | null;
  layouts: StagedLayout[];
}

/** Where a run's projection goes: its folder, its workspace and the layouts besides run.json. */
export interface ProjectionTarget {
  runDir: string;
  workspace: string;
  layouts: readonly LayoutProjection[];
}

/**
 * Stages `state`'s projection: run.json beside its place (unless `whole`: the run's logs/ folder
 * may be missing, its first or a rebuilt projection) and each applicable layout's files in a
 * batch of its own. `early` (before the ledger line is durable): only the layouts that declare
 * `stages`. Nothing is in place until publishLayouts and run.json's publish.
 */
export function stageProjection(
  target: ProjectionTarget,
  state: RunState,
  ctx: StageContext,
  o: { early: boolean; whole: boolean },
): Staged {
  const runJson = o.whole ? null : stageRunJson(state, target.runDir);
  runJson?.catch(() => undefined); // awaited when publishing or discarding
  const staged: Staged = { ctx, runJson, layouts: [] };
  for (const layout of target.layouts) {
    if (!applies(layout, state) || (o.early && layout.stages !== true)) continue;
    staged.layouts.push(stageLayout(target, layout, state, ctx));
  }
  return staged;
}

/**
 * A run's first projection staged: its logs/ folder made (an empty one is a never-started
 * folder's leftover, never-started.ts) and run.json written beside its place. The layouts are
 * staged only once the line is durable (OpenRun.#project): their first projection makes their
 * folders, which must not appear for a run whose first line may yet be lost.
 */
export function stageFirst(target: ProjectionTarget, state: RunState, ctx: StageContext): Staged {
  const runJson = (async () => {
    ensureRealDir(path.join(target.runDir, NATIVE_FILES.logs), {
      root: target.runDir,
      mkdirs: true,
    });
    return stageRunJson(state, target.runDir);
  })();
  runJson.catch(() => undefined); // awaited when publishing or discarding
  return { ctx, runJson, layouts: [] };
}

/** Stages one layout's projection of `state` in a batch of its own. */
export function stageLayout(
  target: ProjectionTarget,
  layout: LayoutProjection,
  state: RunState,
  ctx: StageContext,
): StagedLayout {
  // Unless the layout asks otherwise, no fsync: the marker covers its files until flush().
  const io = new DurableBatch({ durable: layout.durableEachCommit === true });
  // The store's own workspace, never one a ledger line names.
  const full = { ...ctx, runDir: target.runDir, workspace: target.workspace, io };
  let done: Promise<void>;
  try {
    done = layout.project(state, full);
  } catch (err) {
    done = Promise.reject(err);
  }
  done.catch(() => undefined); // awaited when publishing or discarding
  return { layout, io, done };
}

/**
 * Publishes the staged layouts' batches at once (their renames, appends and folder fsyncs
 * overlap), the marker made durable first when one of them writes without fsync. A layout that
 * fails throws a ProjectionFailure and keeps run.json out (it is discarded: it stays stale).
 */
export async function publishLayouts(staged: Staged, durability: LayoutDurability): Promise<void> {
  const staging = await Promise.allSettled(staged.layouts.map((l) => l.done));
  const failedAt = staging.findIndex((r) => r.status === 'rejected');
  const marked = staged.layouts.some(deferred) && failedAt < 0 ? durability.ensure() : null;
  const marking = await marked?.then(
    () => null,
    (err: unknown) => ({ err }),
  );
  if (failedAt >= 0 || marking) {
    await discardStaged(staged);
    const cause = marking ? marking.err : (staging[failedAt] as PromiseRejectedResult).reason;
    throw new ProjectionFailure(staged.layouts[Math.max(failedAt, 0)]!.layout.name, cause);
  }
  const published = await Promise.allSettled(staged.layouts.map((l) => l.io.publish()));
  for (const l of staged.layouts) if (!l.io.durable) durability.track(l.io.touched());
  const publishFailed = published.findIndex((r) => r.status === 'rejected');
  if (publishFailed >= 0) {
    // The other layouts' files are in place (idempotent on the retry); run.json is not.
    await discardRunJson(staged);
    const cause = (published[publishFailed] as PromiseRejectedResult).reason;
    throw new ProjectionFailure(staged.layouts[publishFailed]!.layout.name, cause);
  }
}

/** True when the commit writes the layout's files without fsync (the marker covers them). */
export function deferred(l: StagedLayout): boolean {
  return l.layout.durableEachCommit !== true;
}

/** True when `layout` is written for `state` without fsync (the marker must be durable first). */
export function writesDeferred(layout: LayoutProjection, state: RunState): boolean {
  return applies(layout, state) && layout.durableEachCommit !== true;
}

/** Whether `layout` is written for `state` (default: the run's own layout). */
export function applies(layout: LayoutProjection, state: RunState): boolean {
  return layout.appliesTo ? layout.appliesTo(state) : layout.name === state.layout;
}

/** Removes a staged run.json. */
async function discardRunJson(staged: Staged): Promise<void> {
  await staged.runJson?.then(
    (w) => w.discard(),
    () => undefined,
  );
}

/** Drops everything staged (the ledger line did not become durable, or staging failed). */
export async function discardStaged(staged: Staged): Promise<void> {
  await Promise.all([
    discardRunJson(staged),
    ...staged.layouts.map((l) =>
      l.done.then(
        () => l.io.discard(),
        () => l.io.discard(),
      ),
    ),
  ]).catch(() => undefined);
}

/** A layout's projection threw `cause` (the message is the cause's). */
export class ProjectionFailure extends Error {
  readonly layout: string;
  constructor(layout: string, cause: unknown) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.layout = layout;
  }
}

/** The warning of a commit whose projection by `layout` failed. */
export function projectionWarning(layout: string, message: string, runId: string): string {
  return `the ${layout} projection failed (${message}); the ledger has the run, the projection is retried on the next commit (\`phasebridge repair ${runId}\` rebuilds damaged files)`;
}
