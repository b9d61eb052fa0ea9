/**
 * The work of `phasebridge archive`: finished runs' folders into checked archives, recorded in
 * the runs index (`archived_at`) before the folder is removed, so an interrupted removal is
 * finished by the next `archive` and a run is never packed twice from a half-removed folder.
 */

import {
  archiveRunFolder,
  findArchive,
  removeRunFolder,
  verifyArchive,
} from '../archive/run-archive.ts';
import type { RunsRepo } from '../db/repositories/runs.ts';
import { nativeRunDir } from '../engine/layouts/native.ts';
import { lstatNoSymlink } from '../engine/ledger/safe-path.ts';

/** Options of {@link archiveRuns}. */
export interface ArchiveRunsOptions {
  /** Runs finished before this time (ms). */
  before: number;
  workspace?: string;
  dryRun: boolean;
  print(line: string): void;
}

/** Archives the folders of runs finished before `before`; returns how many failed. */
export async function archiveRuns(runs: RunsRepo, opts: ArchiveRunsOptions): Promise<number> {
  const { print } = opts;
  let archived = 0;
  let failed = 0;
  for (const row of await runs.finishedBefore(opts.before, opts.workspace)) {
    const hasFolder = lstatNoSymlink(nativeRunDir(row.workspace, row.id)) !== null;
    if (row.archivedAt !== null) {
      if (!hasFolder || opts.dryRun) continue;
      // A removal cut short: finished once the archive still checks out.
      const archive = findArchive(row.workspace, row.id);
      const problem = archive === null ? 'its archive is missing' : verifyArchive(archive);
      if (problem === null) {
        removeRunFolder(row.workspace, row.id);
        print(`run ${row.id}: removed the folder left behind (archive ${archive})`);
      } else {
        failed++;
        print(`run ${row.id}: folder kept: ${problem}`);
      }
      continue;
    }
    if (!hasFolder) {
      print(`run ${row.id}: no folder in ${row.workspace} (skipped)`);
      continue;
    }
    const finished = new Date(row.finishedAt ?? 0).toISOString();
    if (opts.dryRun) {
      print(`would archive run ${row.id} (${row.status} ${finished})`);
      archived++;
      continue;
    }
    try {
      const a = await archiveRunFolder(row.workspace, row.id);
      await runs.markArchived(row.id);
      removeRunFolder(row.workspace, row.id);
      archived++;
      print(
        `archived run ${row.id} (${row.status} ${finished}) → ${a.archive} (${a.entries} entries, ${a.bytes} bytes; checksum ${a.checksumFile})`,
      );
    } catch (err) {
      failed++;
      print(`run ${row.id}: not archived: ${(err as Error).message}`);
    }
  }
  const verb = opts.dryRun ? 'would archive' : 'archived';
  print(`${verb} ${archived} run(s)${failed > 0 ? `, ${failed} failed` : ''}`);
  return failed;
}

/** Checks the archive of every archived run; prints one line each; returns how many are bad. */
export async function verifyArchives(
  runs: RunsRepo,
  workspace: string | undefined,
  print: (line: string) => void,
): Promise<number> {
  let ok = 0;
  let bad = 0;
  for (const row of await runs.finishedBefore(Number.MAX_SAFE_INTEGER, workspace)) {
    if (row.archivedAt === null) continue;
    const archive = findArchive(row.workspace, row.id);
    const problem = archive === null ? 'its archive is missing' : verifyArchive(archive);
    if (problem === null) {
      ok++;
      print(`ok   run ${row.id}: ${archive}`);
    } else {
      bad++;
      print(`BAD  run ${row.id}: ${problem}`);
    }
  }
  print(`${ok} archive(s) verified${bad > 0 ? `, ${bad} bad` : ''}`);
  return bad;
}
