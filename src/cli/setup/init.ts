/**
 * `phasebridge init`: the guided first hour. Asks which platforms (and only what those need),
 * prints each platform's steps in the order that works, writes phasebridge.config.yaml (never a
 * secret), migrates bridge.db, runs doctor's checks and ends with the exact message to send in
 * the chat. Every question is also a flag, so a script gives them all and nothing is asked.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import type { Config } from '../../config.ts';
import { ConfigError, type ConfigProblem } from '../../errors.ts';
import type { CliContext } from '../context.ts';
import { discordGuide, slackGuide, telegramGuide } from './guides.ts';
import { discordApplicationId, plainHttp } from './run.ts';
import { slackManifest } from './slack-manifest.ts';

const PLATFORMS = ['telegram', 'slack', 'discord'] as const;
type Platform = (typeof PLATFORMS)[number];

/** Flags of `init`: one for each question, and where to write. */
export interface InitFlags {
  /** Comma-separated `telegram,slack,discord`, or `none` (the web console only). */
  platforms?: string;
  workspace?: string;
  /** Slack HTTP mode: the bridge's https URL. */
  publicUrl?: string;
  /** Slack Socket Mode (no public URL). */
  socket?: boolean;
  /** Telegram: webhook instead of long polling. */
  webhookUrl?: string;
  applicationId?: string;
  /** Where the Slack manifest goes (default slack-manifest.yaml). */
  slackManifest?: string;
  /** Slack: the slash command to register (default SLACK_COMMAND, else /pb); kept in the config. */
  slackCommand?: string;
  /** Slack: the app and bot name in the manifest (default phasebridge). */
  slackName?: string;
  /** The config file to write (default PHASEBRIDGE_CONFIG, else phasebridge.config.yaml). */
  config?: string;
  force?: boolean;
  /** Ask the questions no flag answered (default: when stdin is a terminal). */
  interactive?: boolean;
}

/** The answers, from flags or asked. */
interface Answers {
  platforms: Platform[];
  workspace: string;
  publicUrl?: string;
  webhookUrl?: string;
  /** Slack's slash command when one was given: written to the config so serve answers it. */
  slackCommand?: string;
}

/** A usage mistake in a flag or an answer: exit 2 with this line. */
class InitUsageError extends Error {}

/** Runs init; returns the exit code (2 bad answer, 1 refused or a check failed, 0 done). */
export async function runInit(flags: InitFlags, ctx: CliContext): Promise<number> {
  const file = resolve(flags.config ?? process.env.PHASEBRIDGE_CONFIG ?? 'phasebridge.config.yaml');
  if (existsSync(file) && !flags.force) {
    console.error(`init: ${file} exists: edit it, or pass --force to write it again`);
    return 1;
  }
  let answers: Answers;
  try {
    answers = await gather(flags);
  } catch (err) {
    if (!(err instanceof InitUsageError)) throw err;
    console.error(`init: ${err.message}`);
    return 2;
  }
  mkdirSync(answers.workspace, { recursive: true });
  writeFileSync(file, configYaml(answers));
  console.log(`Wrote ${file} (no secrets: those stay in the environment).\n`);
  ctx.useConfigFile(file);
  const config = await configOrProblems(ctx);
  for (const platform of answers.platforms) {
    const ok = Array.isArray(config) ? undefined : config;
    console.log(`${(await guide(platform, answers, flags, ok)).join('\n')}\n`);
  }
  if (Array.isArray(config)) {
    // A problem of the environment with these settings (e.g. a webhook without its secret).
    for (const p of config)
      console.log(`failed  config: ${p.path}: ${p.problem}\n        fix: ${p.fix}`);
    console.log('\nFix the above, then run `phasebridge doctor`.');
    return 1;
  }
  const codes = await migrateAndPair(answers, ctx);
  const checksOk = await doctor(config, ctx);
  console.log(`\n${nextSteps(answers, config, codes).join('\n')}`);
  return checksOk ? 0 : 1;
}

/** The config read with the file just written, or what is wrong with it (as doctor lists it). */
async function configOrProblems(ctx: CliContext): Promise<Config | ConfigProblem[]> {
  try {
    return await ctx.config();
  } catch (err) {
    if (err instanceof ConfigError) return [...err.problems];
    throw err;
  }
}

/** The answers: each flag, else asked (on a terminal or with --interactive), else its default. */
async function gather(flags: InitFlags): Promise<Answers> {
  const asker = (flags.interactive ?? process.stdin.isTTY === true) ? await lineAsker() : undefined;
  const ask = async (question: string) => (asker ? await asker.ask(question) : '');
  try {
    const platforms = parsePlatforms(
      flags.platforms ??
        (await ask(
          'Which platforms? telegram, slack, discord, comma-separated (Enter: none, the web console only): ',
        )),
    );
    const here = process.cwd();
    const workspace = resolve(
      flags.workspace ?? ((await ask(`Workspace the runs work in [${here}]: `)) || here),
    );
    const answers: Answers = { platforms, workspace };
    if (platforms.includes('slack') && !flags.socket) {
      const url =
        flags.publicUrl ??
        (await ask("Slack: the bridge's public https URL for HTTP mode (Enter: Socket Mode): "));
      if (url) answers.publicUrl = checkedUrl(url, '--public-url');
    }
    if (platforms.includes('slack') && flags.slackCommand !== undefined) {
      answers.slackCommand = checkedSlash(flags.slackCommand);
    }
    if (platforms.includes('telegram')) {
      const url =
        flags.webhookUrl ?? (await ask('Telegram: webhook https URL (Enter: long polling): '));
      if (url) answers.webhookUrl = checkedUrl(url, '--webhook-url');
    }
    return answers;
  } finally {
    asker?.close();
  }
}

function parsePlatforms(text: string): Platform[] {
  const names = text
    .split(/[\s,]+/)
    .map((n) => n.trim().toLowerCase())
    .filter((n) => n !== '' && n !== 'none');
  const unknown = names.filter((n) => !(PLATFORMS as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new InitUsageError(
      `unknown platform "${unknown[0]}": use ${PLATFORMS.join(', ')} or none`,
    );
  }
  return PLATFORMS.filter((p) => names.includes(p));
}

/** The config's own rule for a slash command, said as a usage mistake. */
function checkedSlash(command: string): string {
  if (/^\/[a-z0-9_-]{1,31}$/.test(command)) return command;
  throw new InitUsageError(
    `--slack-command "${command}" must be a slash command such as /pb (lowercase, at most 32 characters)`,
  );
}

function checkedUrl(url: string, flag: string): string {
  const refused = plainHttp(url);
  if (refused) throw new InitUsageError(`${flag} ${refused}`);
  return url;
}

/** The config file: the answers under the schema's names, and where the secrets go instead. */
function configYaml(a: Answers): string {
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const settings: Record<string, unknown> = { workspace: a.workspace };
  if (a.publicUrl) settings.publicUrl = a.publicUrl;
  if (a.webhookUrl) settings.telegram = { webhookUrl: a.webhookUrl };
  if (a.slackCommand) settings.slack = { command: a.slackCommand };
  const secrets = a.platforms.flatMap((p) => secretNames(p, a)).join(', ');
  return [
    '# Written by `phasebridge init`. Every setting: docs/configuration.md.',
    `# Secrets never go here: set them in the environment${secrets ? ` (${secrets})` : ''}.`,
    stringify(settings),
  ].join('\n');
}

/** The env names a platform needs set, in the order its steps produce them. */
function secretNames(platform: Platform, a: Answers): string[] {
  if (platform === 'telegram') {
    return a.webhookUrl
      ? ['TELEGRAM_BOT_TOKEN', 'TELEGRAM_WEBHOOK_SECRET']
      : ['TELEGRAM_BOT_TOKEN'];
  }
  if (platform === 'slack') {
    return a.publicUrl
      ? ['SLACK_SIGNING_SECRET', 'SLACK_BOT_TOKEN']
      : ['SLACK_APP_TOKEN', 'SLACK_BOT_TOKEN'];
  }
  return ['DISCORD_BOT_TOKEN'];
}

/** One platform's steps (setup's own text); Slack's manifest is written to its file. */
async function guide(
  platform: Platform,
  a: Answers,
  flags: InitFlags,
  config: Config | undefined,
): Promise<string[]> {
  if (platform === 'telegram') return telegramGuide({ webhookUrl: a.webhookUrl });
  if (platform === 'discord') {
    const applicationId =
      flags.applicationId ??
      (config ? await discordApplicationId(config) : process.env.DISCORD_APPLICATION_ID);
    return discordGuide({ applicationId });
  }
  const manifestFile = resolve(flags.slackManifest ?? 'slack-manifest.yaml');
  const command = a.slackCommand ?? config?.slack.command ?? process.env.SLACK_COMMAND ?? '/pb';
  const manifest = slackManifest({
    name: flags.slackName ?? 'phasebridge',
    command,
    ...(a.publicUrl && { publicUrl: a.publicUrl }),
  });
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const kept = existsSync(manifestFile) && !flags.force;
  if (!kept) writeFileSync(manifestFile, stringify(manifest));
  const note = kept
    ? `(${manifestFile} exists and was kept: --force writes it again.)`
    : `(Wrote the Slack app manifest to ${manifestFile}.)`;
  return [...slackGuide({ publicUrl: a.publicUrl, command, manifestFile }), note];
}

/**
 * Migrates bridge.db (as `serve` would) and makes a pairing code for each platform's chat: a
 * code pairs one chat, once.
 */
async function migrateAndPair(a: Answers, ctx: CliContext): Promise<Map<Platform, string>> {
  const repos = await ctx.repos();
  const { createPairingCode } = await import('../../chatops/pairing.ts');
  const codes = new Map<Platform, string>();
  for (const p of a.platforms) codes.set(p, await createPairingCode(repos));
  return codes;
}

/** doctor's checks, printed as doctor prints them; true when all passed. */
async function doctor(config: Config, ctx: CliContext): Promise<boolean> {
  console.log('Checking (phasebridge doctor):');
  const { runChecks } = await import('../doctor-checks.ts');
  const results = await runChecks(config, await ctx.dbFile());
  for (const r of results) {
    console.log(`${r.ok ? 'ok    ' : 'failed'}  ${r.name}: ${r.detail}`);
    if (!r.ok && r.fix) console.log(`        fix: ${r.fix}`);
  }
  return results.every((r) => r.ok);
}

/** What is left, ending with the exact message to send in each chat. */
function nextSteps(a: Answers, config: Config, codes: Map<Platform, string>): string[] {
  // Slack's HTTP mode has its own order: serve answers the URL check before the bot token exists.
  const slackHttp = a.platforms.includes('slack') && a.publicUrl !== undefined;
  const unset = a.platforms
    .flatMap((p) => secretNames(p, a))
    .filter((name) => !process.env[name] && !(slackHttp && name === 'SLACK_BOT_TOKEN'));
  const lines = ['Next:'];
  let n = 1;
  if (unset.length > 0) {
    lines.push(`${n++}. Set in the bridge's environment (never in a file): ${unset.join(', ')}.`);
  }
  lines.push(`${n++}. Start the bridge: npm start (or phasebridge serve).`);
  if (slackHttp && !process.env.SLACK_BOT_TOKEN) {
    lines.push(
      `${n++}. Slack: with it running, verify the request URL, install the app, then set SLACK_BOT_TOKEN and restart (Slack's steps 3 and 4 above).`,
    );
  }
  if (codes.size === 0) {
    lines.push(
      `${n}. Open the console link it prints and type:`,
      '',
      '   run demo add a login page',
    );
    return lines;
  }
  const until = new Date(Date.now() + 10 * 60_000).toISOString().slice(11, 16);
  const how: Record<Platform, (code: string) => string> = {
    telegram: (code) => `Telegram (private chat with the bot, or the group): /pair ${code}`,
    slack: (code) =>
      `Slack (in the channel, after /invite of the bot): ${config.slack.command} pair ${code}`,
    discord: (code) => `Discord (in the channel): /pair code:${code}`,
  };
  lines.push(`${n}. Send this in the chat to serve:`, '');
  for (const [p, code] of codes) lines.push(`   ${how[p](code)}`);
  lines.push(
    '',
    `   Each code pairs one chat, once, until ${until} UTC; \`phasebridge pair\` prints a new one. The sender becomes the chat's admin.`,
  );
  return lines;
}

/** Questions on stdout, answers line by line from stdin (piped answers are buffered, not lost). */
async function lineAsker(): Promise<{ ask: (q: string) => Promise<string>; close: () => void }> {
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: process.stdin, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  return {
    ask: async (question) => {
      process.stdout.write(question);
      const next = await lines.next();
      const answer = next.done ? '' : String(next.value).trim();
      if (process.stdin.isTTY !== true) process.stdout.write(`${answer}\n`);
      return answer;
    },
    close: () => rl.close(),
  };
}
