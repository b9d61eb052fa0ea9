import type { Command } from 'commander';
import { InvalidInputError } from '../../errors.ts';
import { makeDirs } from '../../fs-errors.ts';
import { within } from '../../within.ts';
import type { CliContext } from '../context.ts';

/** Exit code of a leader that lost its lease (EX_TEMPFAIL: start it again, as a standby). */
const LOST_LEASE_EXIT = 75;
/** How long a leader that lost its lease tries to stop cleanly before it exits anyway. */
const LOST_STOP_MS = 5_000;
/** How long a leader that lost its lease may take to give its runs' locks up before its stop. */
const RELINQUISH_MS = 3_000;

/** Most agent steps one process runs at once (each is a process of its own). */
const MAX_CONCURRENCY = 64;

/** `phasebridge serve` (what `npm start` runs): the whole bridge until SIGINT or SIGTERM. */
export function registerServeCommand(program: Command, ctx: CliContext): void {
  program
    .command('serve')
    .description(
      'run the bridge: engine, queue, notifier, web console and every adapter whose token is set',
    )
    .option(
      '--concurrency <n>',
      'agent steps run at once by this process (0: only `phasebridge worker` runs them)',
      '2',
    )
    .action(async (opts: { concurrency: string }) => {
      const concurrency = Number(opts.concurrency);
      if (!/^\d+$/.test(opts.concurrency) || concurrency > MAX_CONCURRENCY) {
        throw new InvalidInputError(
          `--concurrency must be a whole number from 0 to ${MAX_CONCURRENCY} (got '${opts.concurrency}')`,
        );
      }
      const config = await ctx.config();
      const log = await ctx.logger();
      await ctx.home();
      // Created here by the mkdir that cannot hang: Node's own loops forever under /proc.
      makeDirs(config.workspace);
      // Loaded here, not at the top: every other CLI command would pay for the adapters' SDKs.
      const { startServe } = await import('../../app/serve-ha.ts');
      const { publicLink } = await import('../../app/public-url.ts');
      const serve = await startServe(config, log, {
        worker: concurrency > 0 ? { concurrency } : false,
      });
      const signalled = new Promise<NodeJS.Signals>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      if (serve.standbyUrl !== undefined) {
        console.log(
          `\nphasebridge is a standby: another bridge leads this database (${serve.standbyUrl}/readyz says which). Its console at ${serve.standbyUrl} is forwarded to the leader's; this one takes over when the leader stops.\n`,
        );
      }
      const first = await Promise.race([
        serve.leading.then((bridge) => ({ bridge })),
        signalled.then((signal) => ({ signal })),
      ]);
      if (!('bridge' in first) || first.bridge === undefined) {
        log.info('stopping the standby');
        await serve.stop();
        return;
      }
      const bridge = first.bridge;
      const chats = [
        config.telegram.botToken && 'telegram',
        config.slack.botToken && 'slack',
        config.discord.botToken && 'discord',
      ].filter((c): c is string => typeof c === 'string');
      // Which adapters are up now (one whose platform did not answer keeps retrying).
      const report = await bridge.readiness.check();
      const stateOf = (platform: string): string => {
        const probe = report.checks.find((c) => c.name === platform);
        if (probe?.ok) return `${platform} (up)`;
        return `${platform} (not up yet: ${probe?.detail ?? probe?.error ?? 'starting'})`;
      };
      // Printed, not logged: the login link is a credential for this terminal's user only.
      console.log(`\nphasebridge is running.\n`);
      console.log(`  Web console: ${publicLink(bridge.loginUrl, bridge.url, config.publicUrl)}`);
      console.log(`  Workspace:   ${bridge.workspace}`);
      console.log(
        `  Chats:       ${chats.length > 0 ? chats.map(stateOf).join(', ') : 'none configured (set TELEGRAM_BOT_TOKEN, SLACK_BOT_TOKEN or DISCORD_BOT_TOKEN)'}`,
      );
      if (chats.length > 0) {
        console.log(
          `  Pair a chat: send "pair ${bridge.pairingCode}" to the bot there (one use, valid 10 minutes)`,
        );
        for (const [platform, link] of Object.entries(bridge.pairingLinks))
          console.log(`  One tap (${platform}): ${link}`);
      }
      const bound = (await bridge.repos.bindings.list()).filter(
        (b) => !b.chatRef.startsWith('web:'),
      );
      if (chats.length === 0) {
        console.log(
          '  Next:        connect a chat: `phasebridge setup telegram` (or slack, discord)',
        );
      } else if (bound.length === 0) {
        console.log('  Next:        pair a chat with the code above (no chat is bound yet)');
      }
      console.log(
        `\n  Try it: open the console and type "run demo add a login page". Ctrl+C stops.\n`,
      );
      const end = await Promise.race([
        signalled.then((signal) => ({ signal })),
        serve.lost.then((why) => ({ why })),
      ]);
      if ('why' in end) {
        // Another bridge leads now. Every fenced write fails, so a graceful stop may never drain:
        // stop what stops within a bound, then exit for the supervisor to start us as a standby.
        console.error(`phasebridge: no longer the leader (${end.why}); stopping`);
        // The runs first: the new leader commits to them as soon as it leads, and this stop
        // may wait out its grace on running steps and a silent Redis before the locks would go.
        const bridge = await within(
          serve.leading.catch(() => undefined),
          RELINQUISH_MS,
        );
        const gaveUp =
          bridge &&
          (await within(
            bridge.relinquish(end.why).then(() => true),
            RELINQUISH_MS,
          ));
        if (bridge && gaveUp !== true)
          log.warn('no longer the leader: the runs were not given up in time');
        const stopped = await Promise.race([
          serve.stop().then(() => true),
          new Promise<false>((r) => setTimeout(() => r(false), LOST_STOP_MS).unref()),
        ]);
        if (!stopped) log.warn('no longer the leader: the stop did not finish in time, exiting');
        // Agents lead process groups of their own and would outlive us, running on while another
        // worker takes their steps again (their queue locks lapse): a step would run twice.
        const { killAgentGroups } = await import('../../jobs/runner/spawn.ts');
        const killed = killAgentGroups();
        if (killed > 0) log.warn({ killed }, 'no longer the leader: agents still running killed');
        process.exit(LOST_LEASE_EXIT);
      }
      log.info(end, 'stopping: no new updates; running steps finish or go back to the queue');
      await serve.stop();
      log.info('stopped');
    });
}
