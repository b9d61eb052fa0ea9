import type { Command } from 'commander';
import { ConfigError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/** `phasebridge doctor`: one line per check, ok or failed with the fix; exit 1 when any failed. */
export function registerDoctorCommand(program: Command, ctx: CliContext): void {
  program
    .command('doctor')
    .description(
      'check the config, bridge.db, Redis (when REDIS_URL is set) and each platform: reachable (DNS, network, TLS), token, scopes, webhook',
    )
    .action(async () => {
      let config: Awaited<ReturnType<CliContext['config']>>;
      try {
        config = await ctx.config();
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        for (const p of err.problems)
          console.log(`failed  config: ${p.path}: ${p.problem}\n        fix: ${p.fix}`);
        process.exitCode = 1;
        return;
      }
      // Loaded here: it opens bridge.db (Kysely, SQLite), which `--help` should not load.
      const { runChecks } = await import('../doctor-checks.ts');
      const results = await runChecks(config, await ctx.dbFile());
      for (const r of results) {
        console.log(`${r.ok ? 'ok    ' : 'failed'}  ${r.name}: ${r.detail}`);
        if (!r.ok && r.fix) console.log(`        fix: ${r.fix}`);
      }
      if (results.some((r) => !r.ok)) process.exitCode = 1;
    });
}
