/**
 * Finding a workflow by reference: a path to a file, or an id looked up as
 * `<dir>/workflows/<id>.workflow.yaml` in each search dir (workspace, then bridge home), then
 * among the built-ins.
 */
import { lstat } from 'node:fs/promises';
import path from 'node:path';
import { NotFoundError } from '../../errors.ts';
import { isInside } from '../ledger/safe-path.ts';
import { BUILTIN_WORKFLOWS } from './builtin.ts';
import { loadWorkflow } from './load.ts';
import { ID_PATTERN } from './schema.ts';
import type { Workflow } from './types.ts';

/**
 * A folder holding a `workflows/` folder, and the folder its workflows' files must stay inside
 * (a workspace: itself; the bridge home: its `workflows/`, never the rest of the home).
 */
export interface SearchDir {
  dir: string;
  root: string;
}

/** Options of findWorkflow. */
export interface FindOptions {
  /** Folders holding a `workflows/` folder, searched in order (a plain path is its own root). */
  searchDirs: readonly (string | SearchDir)[];
  knownAgents?: readonly string[];
}

/** Loads the workflow `ref` names (a .yaml path or an id); NotFoundError says where it looked. */
export async function findWorkflow(ref: string, opts: FindOptions): Promise<Workflow> {
  const agents = opts.knownAgents ? { knownAgents: opts.knownAgents } : {};
  const dirs = opts.searchDirs.map((d) => (typeof d === 'string' ? { dir: d, root: d } : d));
  if (/\.ya?ml$/.test(ref)) {
    // A path inside a searched folder is confined like the folder's own workflows.
    const root = dirs.find((d) => isInside(d.root, ref))?.root;
    return loadWorkflow(ref, root === undefined ? agents : { ...agents, root });
  }
  // An id becomes part of a path: only plain ids, so `../x` cannot escape the folders.
  if (!ID_PATTERN.test(ref)) throw new NotFoundError(`no workflow "${ref}" (not a valid id)`);
  const candidates = dirs.map((d) => ({
    file: path.join(d.dir, 'workflows', `${ref}.workflow.yaml`),
    root: d.root,
  }));
  for (const { file, root } of candidates) {
    if (await exists(file)) return loadWorkflow(file, { ...agents, root });
  }
  const builtin = BUILTIN_WORKFLOWS[ref];
  if (builtin) return builtin;
  const looked = [...candidates.map((c) => c.file), 'the built-ins'].join(', ');
  throw new NotFoundError(`no workflow "${ref}" (looked in ${looked})`);
}

/** True when something is at `file` (a planted link too: loading it then says so). */
async function exists(file: string): Promise<boolean> {
  try {
    await lstat(file);
    return true;
  } catch {
    return false;
  }
}
