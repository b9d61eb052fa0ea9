/**
 * One RunStore per workspace (a store writes the runs of one workspace), all sharing the
 * orchestrator's codemachine layout projection. Also turns the run lock's conflict into the
 * message users see: "run X is being driven by pid N".
 */
import path from 'node:path';
import {
  CodemachineLayout,
  type HandEdit,
  skipTargets,
} from '../../engine/layouts/codemachine/index.ts';
import { codexclawLayout } from '../../engine/layouts/codexclaw/index.ts';
import { coordinatorLayout } from '../../engine/layouts/coordinator/index.ts';
import { flowLayout } from '../../engine/layouts/flow/index.ts';
import type { RunState } from '../../engine/model.ts';
import { RunStore } from '../../engine/store/run-store.ts';
import { ConflictError } from '../../errors.ts';
import type { AgentInfo } from './agent-resolver.ts';

/** The stores of every workspace the orchestrator touched. */
export class RunStores {
  readonly #stores = new Map<string, RunStore>();
  readonly #layout: CodemachineLayout;
  readonly #clock: () => Date;

  constructor(opts: {
    agentInfo: (name: string) => AgentInfo | undefined;
    clock: () => Date;
    /** A hand edit of template.json was found during a commit: the caller applies it soon. */
    onHandEdit?: (runId: string) => void;
  }) {
    const notify = opts.onHandEdit;
    this.#layout = new CodemachineLayout({
      agentInfo: opts.agentInfo,
      // Keep an actionable edit on disk until its command is committed, so a commit racing the
      // supervisor (a step finishing) does not overwrite it.
      ...(notify && {
        onHandEdit: (edit: HandEdit, state: RunState) => {
          const keep = actionable(edit, state);
          if (keep) notify(state.id);
          return keep;
        },
      }),
    });
    this.#clock = opts.clock;
  }

  /** The store of `workspace` (opened on first use). */
  for(workspace: string): RunStore {
    const ws = path.resolve(workspace);
    let store = this.#stores.get(ws);
    if (store === undefined) {
      store = new RunStore({
        workspace: ws,
        layouts: [this.#layout, codexclawLayout, flowLayout, coordinatorLayout],
        clock: this.#clock,
      });
      this.#stores.set(ws, store);
    }
    return store;
  }

  /** Closes every store (releasing every run lock) and the layout's registry handles. */
  async close(): Promise<void> {
    await Promise.all([...this.#stores.values()].map((s) => s.close()));
    this.#stores.clear();
    this.#layout.close();
  }
}

const LOCKED_BY = /is locked by pid (\d+)( \(this process\))?/;
const HELD = /is (locked|being driven) by pid \d+/;

/** True when `err` says another live holder has the run's lock (reworded or not). */
export function isRunLockConflict(err: unknown): boolean {
  return err instanceof ConflictError && HELD.test(err.message);
}

/** The run lock's ConflictError reworded for users; other errors are returned unchanged. */
export function describeLockConflict(err: unknown, runId: string): unknown {
  if (!(err instanceof ConflictError)) return err;
  const m = LOCKED_BY.exec(err.message);
  if (m === null) return err;
  const who = m[2] === undefined ? '' : ' (this process)';
  return new ConflictError(`run ${runId} is being driven by pid ${m[1]}${who}`, { cause: err });
}

/** True when a hand edit turns into a command (revert, reset, skip of the current/a later step). */
function actionable(edit: HandEdit, state: RunState): boolean {
  if (edit.kind === 'revert' || edit.kind === 'reset') return true;
  if (edit.kind !== 'skip') return false;
  const targets = skipTargets(state, edit.indexes);
  return targets.current !== undefined || targets.ahead.length > 0;
}
