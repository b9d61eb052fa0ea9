import type { Command } from 'commander';
import type { PruneReport } from '../../db/retention.ts';
import { formatDuration } from '../../engine/workflow/duration.ts';
import type { CliContext } from '../context.ts';

/**
 * `phasebridge prune`: drops finished jobs and audit rows older than the retention
 * (PHASEBRIDGE_RETAIN_JOBS, PHASEBRIDGE_RETAIN_AUDIT), audit rows exported first; `serve` also
 * does this every six hours.
 */
export function registerPruneCommand(program: Command, ctx: CliContext): void {
  program
    .command('prune')
    .description(
      'remove finished jobs and audit rows older than their retention from bridge.db (audit exported first as JSON Lines under PHASEBRIDGE_HOME/audit/)',
    )
    .option('--dry-run', 'only count what would be removed')
    .option('--vacuum', 'afterwards give the freed space back to the file system (VACUUM)')
    .option('--json', 'print the report as JSON')
    .action(async (opts: { dryRun?: boolean; vacuum?: boolean; json?: boolean }) => {
      const { auditExportDir, retentionPolicy } = await import('../../app/retention.ts');
      const { pruneBridgeDb } = await import('../../db/retention.ts');
      const config = await ctx.config();
      const db = await ctx.db();
      const policy = retentionPolicy(config);
      const report = await pruneBridgeDb(db, {
        policy,
        exportDir: auditExportDir(config),
        dryRun: opts.dryRun === true,
      });
      if (opts.vacuum && !opts.dryRun) db.sqlite.exec('VACUUM');
      if (opts.json) {
        console.log(JSON.stringify({ ...report, dryRun: opts.dryRun === true }, null, 2));
        return;
      }
      for (const line of describePrune(report, policy, opts.dryRun === true)) console.log(line);
    });
}

/** The report in lines of text. */
export function describePrune(
  r: PruneReport,
  policy: { jobsMs: number; auditMs: number },
  dryRun: boolean,
): string[] {
  const verb = dryRun ? 'would remove' : 'removed';
  const iso = (ms: number) => new Date(ms).toISOString();
  const lines = [
    `jobs: ${verb} ${r.jobs} finished job(s) of finished runs, finished before ${iso(r.jobsBefore)} (kept ${formatDuration(policy.jobsMs)})`,
    `audit: ${verb} ${r.audit} row(s) from before ${iso(r.auditBefore)} (kept ${formatDuration(policy.auditMs)})`,
  ];
  if (r.auditExport !== null) lines.push(`audit rows exported first to ${r.auditExport}`);
  if (dryRun) lines.push('dry run: nothing was changed; `phasebridge prune` does it');
  return lines;
}
