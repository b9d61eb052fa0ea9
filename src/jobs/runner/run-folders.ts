/**
 * The folders phasebridge and the layouts keep their run bookkeeping in, inside a workspace. They
 * are never part of a step's diff or changed-files list. Spelled out here rather than imported
 * from each layout (a worker would load every layout's format code for five names); a test keeps
 * the list in step with the layouts' own constants.
 */

/** Run folders of phasebridge (`.phasebridge`) and of the layouts, relative to the workspace. */
export const RUN_FOLDERS: readonly string[] = [
  '.phasebridge',
  '.codemachine',
  '.codexclaw',
  '.flow',
  '.coordinator',
];

/** True when the workspace-relative `p` (git's `/` separators) is a run folder or inside one. */
export function inRunFolder(p: string): boolean {
  const clean = p.replace(/^\.\//, '').replace(/\/+$/, '');
  return RUN_FOLDERS.some((d) => clean === d || clean.startsWith(`${d}/`));
}
