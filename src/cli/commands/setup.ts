import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import type { InitFlags } from '../setup/init.ts';
import type { SetupFlags } from '../setup/run.ts';

const PLATFORMS = ['telegram', 'slack', 'discord'] as const;

/**
 * `phasebridge setup telegram|slack|discord`: the steps to connect a bot, the Slack manifest and
 * the Discord invite URL, and, when the token is already in the environment, a check of it
 * against the platform (doctor's checks). Tokens are read from the environment only. Without a
 * platform it is `phasebridge init`: asks which ones, and goes through each.
 */
export function registerSetupCommand(program: Command, ctx: CliContext): void {
  program
    .command('setup')
    .argument(
      '[platform]',
      `${PLATFORMS.join(', ')} (without one: the guided \`phasebridge init\`)`,
    )
    .description(
      'guide to connect a bot: steps, Slack app manifest, Discord invite URL; checks the token when set',
    )
    .option('--webhook-url <url>', 'telegram: webhook URL (default TELEGRAM_WEBHOOK_URL)')
    .option('--public-url <url>', 'slack: https URL of the bridge (default PHASEBRIDGE_PUBLIC_URL)')
    .option('--socket', 'slack: Socket Mode manifest (no public URL needed)')
    .option('--command <slash>', 'slack: slash command (default SLACK_COMMAND, /pb)')
    .option('--name <name>', 'slack: app and bot name', 'phasebridge')
    .option('--out <file>', 'slack: also write the manifest (YAML) to this file')
    .option('--application-id <id>', 'discord: application id when no token is set yet')
    .option('--interactive', 'ask for the token on stdin (default when stdin is a terminal)')
    .option('--platforms <list>', 'no platform (= init): telegram, slack, discord or none')
    .option('--workspace <dir>', 'no platform (= init): folder the runs work in')
    .option('--config <file>', 'no platform (= init): the config file to write')
    .option('--force', 'no platform (= init): write the config again when it exists')
    .action(async (platform: string | undefined, opts: SetupFlags & InitFlags) => {
      if (platform === undefined) {
        const { runInit } = await import('../setup/init.ts');
        // setup's Slack flags keep their meaning under init's names.
        const { out, name, command, ...same } = opts;
        process.exitCode = await runInit(
          {
            ...same,
            ...(out && { slackManifest: out }),
            ...(command !== undefined && { slackCommand: command }),
            ...(name !== 'phasebridge' && { slackName: name }),
          },
          ctx,
        );
        return;
      }
      if (!(PLATFORMS as readonly string[]).includes(platform)) {
        console.error(`unknown platform "${platform}": use ${PLATFORMS.join(', ')}`);
        process.exitCode = 2;
        return;
      }
      const config = await ctx.config();
      const { runSetup } = await import('../setup/run.ts');
      process.exitCode = await runSetup(platform as (typeof PLATFORMS)[number], opts, config);
    });
}
