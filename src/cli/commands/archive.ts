import { resolve } from 'node:path';
import type { Command } from 'commander';
import { DURATION_HINT, parseDuration } from '../../engine/workflow/duration.ts';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

interface ArchiveOptions {
  olderThan?: string;
  workspace?: string;
  verify?: boolean;
  dryRun?: boolean;
}

/**
 * `phasebridge archive --older-than 30d`: the folders of runs finished before then become
 * `<id>.tar.gz` (+ `.sha256`) beside them; `--verify` checks every archive made so far.
 */
export function registerArchiveCommand(program: Command, ctx: CliContext): void {
  program
    .command('archive')
    .description(
      'pack the folders of finished runs into <run>.tar.gz (tar.zst when Node has zstd) with a .sha256 beside them, checked before the folder is removed',
    )
    .option('--older-than <duration>', 'runs finished longer ago than this, e.g. 30d')
    .option('--workspace <dir>', 'only runs of this workspace')
    .option('--verify', 'check every archive made so far against its checksum and contents')
    .option('--dry-run', 'only list the runs that would be archived')
    .action(async (opts: ArchiveOptions) => {
      const { archiveRuns, verifyArchives } = await import('../archive-runs.ts');
      const workspace = opts.workspace === undefined ? undefined : resolve(opts.workspace);
      const runs = (await ctx.repos()).runs;
      if (opts.verify) {
        if (opts.olderThan !== undefined) {
          throw new InvalidInputError('give --verify or --older-than, not both');
        }
        const bad = await verifyArchives(runs, workspace, (l) => console.log(l));
        if (bad > 0) process.exitCode = 1;
        return;
      }
      if (opts.olderThan === undefined) {
        throw new InvalidInputError('say which runs: --older-than 30d (or --verify)');
      }
      const ms = parseDuration(opts.olderThan);
      if (ms === null) {
        throw new InvalidInputError(`--older-than '${opts.olderThan}': ${DURATION_HINT}`);
      }
      const failed = await archiveRuns(runs, {
        before: Date.now() - ms,
        dryRun: opts.dryRun === true,
        print: (l) => console.log(l),
        ...(workspace === undefined ? {} : { workspace }),
      });
      if (failed > 0) process.exitCode = 1;
    });
}
