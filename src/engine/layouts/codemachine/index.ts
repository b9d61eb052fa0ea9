/**
 * The `codemachine` layout: a run projected into `<workspace>/.codemachine/` exactly as
 * CodeMachine's runtime-state document specifies (template.json, memory/directive.json,
 * inputs/specification.md, agents/agent-config.json, logs/registry.db, logs/agent-*.log), so
 * CodeMachine's tools can read the run and a user can steer it by editing template.json.
 *
 * One codemachine-layout run per workspace at a time: `.codemachine/` has a single template.json.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { DurableBatch } from '../../ledger/durable-batch.ts';
import type { RunState } from '../../model.ts';
import {
  type LayoutProjection,
  type ProjectionContext,
  projectThrough,
  type SalvagedFile,
} from '../port.ts';
import { type AgentInfoLookup, buildAgentConfig, serializeAgentConfig } from './agent-config.ts';
import type { HandEdit } from './hand-edits.ts';
import { type CodemachinePaths, codemachinePaths } from './paths.ts';
import { RegistryDb } from './registry-db.ts';
import { applyRegistryEvents } from './registry-projection.ts';
import { salvageCodemachine } from './salvage.ts';
import {
  buildTemplate,
  type RegistryIdLookup,
  serializeTemplate,
  withForeignFields,
} from './template.ts';
import { detectFromRead, readTemplateAt } from './template-file.ts';
import { resetDirective, writeLayoutFile, writeLayoutFileNow } from './writer.ts';

export { type AgentConfigEntry, type AgentInfoLookup, buildAgentConfig } from './agent-config.ts';
export {
  detectHandEdit,
  FILE_EDIT_ACTOR,
  type HandEdit,
  handEditCommand,
  skipTargets,
} from './hand-edits.ts';
export { agentLogPath, CODEMACHINE_DIR, type CodemachinePaths, codemachinePaths } from './paths.ts';
export {
  type AgentRunHandle,
  type AgentRunRow,
  RegistryDb,
  registerAgentRun,
} from './registry-db.ts';
export {
  activeTemplateName,
  buildTemplate,
  serializeTemplate,
  withForeignFields,
} from './template.ts';
export { checkHandEdit, readTemplateFile, type TemplateRead } from './template-file.ts';
export type { StepData, TemplateTracking } from './template-schema.ts';

/** Options of {@link CodemachineLayout}. */
export interface CodemachineLayoutOptions {
  /** Engine/model/display name of named agents, for agent-config.json and registry.db. */
  agentInfo?: AgentInfoLookup;
  /**
   * Called during a commit when template.json was edited by hand since our last write. Return
   * true to keep the edited file (the caller will commit the matching revert/reset with
   * `handEditCommand`, from outside this call: it runs inside a commit), false to overwrite it.
   * It is called again on every commit until a revert/reset is committed (dedupe on your side).
   * Without a handler the file is always rewritten; poll `checkHandEdit` between commits then.
   * An unreadable file is always rewritten (repaired) after being reported.
   */
  onHandEdit?: (edit: HandEdit, state: RunState) => boolean;
}

/** The codemachine layout projection; `close()` releases its registry.db handles. */
export class CodemachineLayout implements LayoutProjection {
  readonly name = 'codemachine';
  /** Writes only through the commit's batch: staged with the ledger line, published after it. */
  readonly stages = true;
  /** template.json is read back as hand edits: a lost write would read as one (port.ts). */
  readonly durableEachCommit = true;
  readonly #opts: CodemachineLayoutOptions;
  /** Open registries by `.codemachine` folder, with the inode each was opened at. */
  readonly #registries = new Map<string, { db: RegistryDb; ino: number }>();
  constructor(opts: CodemachineLayoutOptions = {}) {
    this.#opts = opts;
  }

  /** Writes every file of the layout for `state`. */
  project(state: RunState, ctx: ProjectionContext): Promise<void> {
    return projectThrough(ctx, (io) => this.#project(state, ctx, io));
  }

  /**
   * Stages the files. registry.db's rows are written when the batch publishes (once the ledger
   * line is durable); template.json, which names their ids, is staged now with the ids they
   * will get, found by folding the same events in a transaction rolled back at once: no write
   * lock is held across the ledger's fsync (a worker of this process registering an agent run
   * would wait on it with the bridge's thread blocked).
   */
  #project(state: RunState, ctx: ProjectionContext, io: DurableBatch): void {
    const paths = codemachinePaths(ctx.workspace);
    const registry = this.#registry(paths);
    const fold = {
      state,
      ...(this.#opts.agentInfo && { agentInfo: this.#opts.agentInfo }),
      ...(ctx.history && { history: ctx.history }),
    };
    const ids: RegistryIdLookup = (step) => registry.latestRowId(state.id, step.id);
    const { template, onDisk } = this.#templatePlan(state, ctx, paths);
    // registry.db first: a step skipped before it ran has its monitoringId only there.
    const expected = registry.rehearse(() => {
      applyRegistryEvents(registry, ctx.events, fold);
      return template?.(ids) ?? null;
    });
    // Compared with the text #templatePlan just read: one read of template.json per commit.
    const staged =
      expected === null ? null : writeLayoutFile(paths, paths.template, expected, io, onDisk);
    io.onPublish(() => {
      applyRegistryEvents(registry, ctx.events, fold);
      if (template === null) return;
      const written = template(ids);
      if (written === expected) return;
      // Another writer of registry.db took the ids first (rare): the right template goes in now.
      staged?.cancel();
      writeLayoutFileNow(paths, paths.template, written);
    });
    // The spec and agent list are fixed at start: written then (and on a rebuild), not per commit.
    const started = ctx.events.some((e) => e.type === 'runStarted');
    if (started || ctx.rebuild) {
      writeLayoutFile(paths, paths.spec, state.spec, io);
      const entries = buildAgentConfig(state.workflow, this.#opts.agentInfo);
      writeLayoutFile(paths, paths.agentConfig, serializeAgentConfig(entries), io);
    }
    // Reset when a step is queued, i.e. before its agent can exist (so the "started" commit may
    // come after the spawn without wiping a fast agent's directive). Never on a rebuild.
    if (started || queuesStep(state, ctx)) resetDirective(paths, io);
  }

  /** Moves aside a registry.db or template.json that cannot be read (see salvage.ts). */
  salvage(workspace: string, stamp: string | null): SalvagedFile[] {
    if (stamp !== null) this.#forget(codemachinePaths(workspace).root);
    return salvageCodemachine(workspace, stamp);
  }

  /** Closes the registry.db handles this projection opened. */
  close(): void {
    for (const { db } of this.#registries.values()) db.close();
    this.#registries.clear();
  }

  #registry(paths: CodemachinePaths): RegistryDb {
    const open = this.#registries.get(paths.root);
    // A registry.db deleted or replaced since it was opened is opened again: writing through the
    // old handle would land in a file nobody reads.
    const ino = fs.statSync(paths.registryDb, { throwIfNoEntry: false })?.ino;
    if (open && open.ino === ino) return open.db;
    this.#forget(paths.root);
    const db = RegistryDb.open(path.dirname(paths.root));
    const opened = fs.statSync(paths.registryDb, { throwIfNoEntry: false })?.ino ?? -1;
    this.#registries.set(paths.root, { db, ino: opened });
    return db;
  }

  #forget(root: string): void {
    this.#registries.get(root)?.db.close();
    this.#registries.delete(root);
  }

  /**
   * template.json's text for `state` given the registry's ids, merged over the keys others wrote
   * (null when a hand edit is to be kept on disk), and the text on disk now (null: missing). The document last written is rebuilt from the
   * state before this commit's events. A revert or reset in this commit carries out (or
   * overrides) any edit: its result is written.
   */
  #templatePlan(
    state: RunState,
    ctx: ProjectionContext,
    paths: CodemachinePaths,
  ): { template: ((ids: RegistryIdLookup) => string) | null; onDisk: string | null } {
    const handler = this.#opts.onHandEdit;
    const rewinds = ctx.events.some((e) => e.type === 'reverted' || e.type === 'runReset');
    const read = readTemplateAt(paths.template);
    const onDisk = read.kind === 'missing' ? null : read.text;
    if (handler && ctx.previous && !ctx.rebuild && !rewinds) {
      const edit = detectFromRead(buildTemplate(ctx.previous), read);
      if (edit.kind !== 'none' && handler(edit, state) && edit.kind !== 'unreadable') {
        return { template: null, onDisk };
      }
    }
    // Keys CodeMachine (or the user) wrote that the run's state does not hold survive the rewrite.
    const foreign = read.kind === 'ok' ? JSON.parse(read.text) : undefined;
    const template = (ids: RegistryIdLookup) =>
      serializeTemplate(withForeignFields(buildTemplate(state, ids), foreign));
    return { template, onDisk };
  }
}

/** True when this commit started a step attempt that is still running (not a replayed start). */
function queuesStep(state: RunState, ctx: ProjectionContext): boolean {
  return (
    !ctx.rebuild &&
    ctx.events.some(
      (e) =>
        e.type === 'stepQueued' &&
        state.steps.some(
          (s) => s.id === e.stepId && s.status === 'queued' && s.attempt === e.attempt,
        ),
    )
  );
}
