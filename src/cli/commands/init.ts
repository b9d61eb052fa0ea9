import type { Command } from 'commander';
import type { CliContext } from '../context.ts';
import type { InitFlags } from '../setup/init.ts';

/**
 * `phasebridge init`: asks which platforms, prints their steps in the order that works, writes
 * the config, runs doctor and ends with the message to send in the chat (setup/init.ts).
 */
export function registerInitCommand(program: Command, ctx: CliContext): void {
  program
    .command('init')
    .description(
      'guided first setup: asks which platforms, prints their steps, writes phasebridge.config.yaml, runs doctor, ends with the message to send in the chat',
    )
    .option(
      '--platforms <list>',
      'telegram, slack, discord (comma-separated) or none: which chats to connect',
    )
    .option('--workspace <dir>', 'folder the runs work in (default: the current folder)')
    .option(
      '--public-url <url>',
      "slack: the bridge's public https URL (HTTP mode); without it, Socket Mode",
    )
    .option('--socket', 'slack: Socket Mode (no public URL, nothing to open)')
    .option('--webhook-url <url>', 'telegram: webhook https URL; without it, long polling')
    .option('--application-id <id>', 'discord: application id when no token is set yet')
    .option('--slack-manifest <file>', 'slack: where the app manifest goes', 'slack-manifest.yaml')
    .option(
      '--slack-command <slash>',
      'slack: the slash command to register and answer (default SLACK_COMMAND, /pb)',
    )
    .option('--slack-name <name>', 'slack: app and bot name in the manifest (default phasebridge)')
    .option(
      '--config <file>',
      'the config file to write (default PHASEBRIDGE_CONFIG, else phasebridge.config.yaml)',
    )
    .option('--force', 'write the config (and manifest) again when they exist')
    .option('--interactive', 'ask what no flag answers, also when stdin is not a terminal')
    .action(async (opts: InitFlags) => {
      const { runInit } = await import('../setup/init.ts');
      process.exitCode = await runInit(opts, ctx);
    });
}
