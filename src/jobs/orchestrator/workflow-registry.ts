/**
 * The workflows a run can be started with: `<workspace>/workflows/<id>.workflow.yaml`, then
 * `<home>/workflows/<id>.workflow.yaml`, then the built-ins (the first found wins, as in
 * findWorkflow). Listing reads every file and reports broken ones instead of hiding them.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { BUILTIN_WORKFLOWS } from '../../engine/workflow/builtin.ts';
import { findWorkflow, type SearchDir } from '../../engine/workflow/find.ts';
import { loadWorkflow } from '../../engine/workflow/load.ts';
import type { Workflow } from '../../engine/workflow/types.ts';
import type { Log } from '../../log.ts';

/** One workflow as listed; `source` is its file path or `builtin`. */
export interface WorkflowInfo {
  id: string;
  name?: string;
  description?: string;
  source: string;
}

const SUFFIX = '.workflow.yaml';

/** Finds and lists workflows for a bridge home. */
export class WorkflowRegistry {
  readonly #home: string;
  readonly #log: Log;

  constructor(opts: { home: string; log: Log }) {
    this.#home = path.resolve(opts.home);
    this.#log = opts.log;
  }

  /**
   * Folders searched for `workflows/`, workspace first. A workspace's workflows may use files
   * anywhere in it; the home's only files in its `workflows/` (the rest holds bridge.db).
   */
  searchDirs(workspace?: string): SearchDir[] {
    const home = { dir: this.#home, root: path.join(this.#home, 'workflows') };
    if (workspace === undefined) return [home];
    const ws = path.resolve(workspace);
    return [{ dir: ws, root: ws }, home];
  }

  /**
   * Loads workflow `ref` (an id or a .yaml path) for a run in `workspace`; with `knownAgents`
   * every step's agent must be one of them. NotFoundError / InvalidInputError otherwise.
   */
  async find(ref: string, workspace: string, knownAgents?: readonly string[]): Promise<Workflow> {
    const opts = knownAgents === undefined ? {} : { knownAgents };
    return findWorkflow(ref, { searchDirs: this.searchDirs(workspace), ...opts });
  }

  /** Every valid workflow visible from `workspace` (or the home only), shadowed ids left out. */
  async list(workspace?: string): Promise<WorkflowInfo[]> {
    const seen = new Map<string, WorkflowInfo>();
    for (const { dir, root } of this.searchDirs(workspace)) {
      for (const file of await workflowFiles(path.join(dir, 'workflows'))) {
        const id = path.basename(file, SUFFIX);
        if (seen.has(id)) continue;
        try {
          seen.set(id, infoOf(await loadWorkflow(file, { root }), file));
        } catch (err) {
          this.#log.warn(
            { file, err: (err as Error).message },
            'skipping an invalid workflow file',
          );
        }
      }
    }
    for (const [id, wf] of Object.entries(BUILTIN_WORKFLOWS)) {
      if (!seen.has(id)) seen.set(id, infoOf(wf, 'builtin'));
    }
    return [...seen.values()].sort((a, b) => a.id.localeCompare(b.id));
  }
}

function infoOf(wf: Workflow, source: string): WorkflowInfo {
  const info: WorkflowInfo = { id: wf.id, source };
  if (wf.name !== undefined) info.name = wf.name;
  if (wf.description !== undefined) info.description = wf.description;
  return info;
}

async function workflowFiles(dir: string): Promise<string[]> {
  try {
    const names = await fs.readdir(dir);
    return names
      .filter((n) => n.endsWith(SUFFIX))
      .sort()
      .map((n) => path.join(dir, n));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}
