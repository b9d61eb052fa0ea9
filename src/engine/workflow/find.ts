/**
 * Finding a workflow by reference: a path to a file, or an id looked up as
 * `<dir>/workflows/<id>.workflow.yaml` in each search dir (workspace, then bridge home), then
 * among the built-ins.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { NotFoundError } from '../../errors.ts';
import { BUILTIN_WORKFLOWS } from './builtin.ts';
import { loadWorkflow } from './load.ts';
import { ID_PATTERN } from './schema.ts';
import type { Workflow } from './types.ts';

/** Options of findWorkflow. */
export interface FindOptions {
  /** Folders holding a `workflows/` folder, searched in order. */
  searchDirs: readonly string[];
  knownAgents?: readonly string[];
}

/** Loads the workflow `ref` names (a .yaml path or an id); NotFoundError says where it looked. */
export async function findWorkflow(ref: string, opts: FindOptions): Promise<Workflow> {
  const agents = opts.knownAgents ? { knownAgents: opts.knownAgents } : {};
  if (/\.ya?ml$/.test(ref)) return loadWorkflow(ref, agents);
  // An id becomes part of a path: only plain ids, so `../x` cannot escape the folders.
  if (!ID_PATTERN.test(ref)) throw new NotFoundError(`no workflow "${ref}" (not a valid id)`);
  const candidates = opts.searchDirs.map((d) => path.join(d, 'workflows', `${ref}.workflow.yaml`));
  for (const file of candidates) {
    if (await exists(file)) return loadWorkflow(file, agents);
  }
  const builtin = BUILTIN_WORKFLOWS[ref];
  if (builtin) return builtin;
  const looked = [...candidates, 'the built-ins'].join(', ');
  throw new NotFoundError(`no workflow "${ref}" (looked in ${looked})`);
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
