/**
 * What `phasebridge setup <platform>` prints and checks. Loaded only by that command: it pulls
 * in the YAML writer and the platform checks.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Config } from '../../config.ts';
import { isLoopbackHost } from '../../config-checks.ts';
import type { CheckResult } from '../doctor-checks.ts';
import { API_ROOTS, checkDiscord, checkSlack, checkTelegram } from '../doctor-platforms.ts';
import { probe } from '../platform-probe.ts';
import { discordGuide, slackGuide, telegramGuide } from './guides.ts';
import { slackManifest } from './slack-manifest.ts';

/** Flags of `setup` (see commands/setup.ts). */
export interface SetupFlags {
  webhookUrl?: string;
  publicUrl?: string;
  socket?: boolean;
  command?: string;
  name: string;
  out?: string;
  applicationId?: string;
  /** Ask for the token on stdin when it is not set (default: when stdin is a terminal). */
  interactive?: boolean;
}

/** Prints the guide for `platform` and checks its token when set; returns the exit code. */
export async function runSetup(
  platform: 'telegram' | 'slack' | 'discord',
  flags: SetupFlags,
  config: Config,
): Promise<number> {
  if (platform === 'telegram') {
    const refused = flags.webhookUrl ? plainHttp(flags.webhookUrl) : undefined;
    if (refused) {
      console.error(`setup telegram: --webhook-url ${refused}`);
      return 2;
    }
    print(telegramGuide({ webhookUrl: flags.webhookUrl ?? config.telegram.webhookUrl }));
    return check(flags, config.telegram.botToken, 'TELEGRAM_BOT_TOKEN', (botToken) =>
      checkTelegram({ ...config.telegram, botToken }),
    );
  }
  if (platform === 'slack') return setupSlack(flags, config);
  const applicationId = flags.applicationId ?? (await discordApplicationId(config));
  print(discordGuide({ applicationId }));
  return check(flags, config.discord.botToken, 'DISCORD_BOT_TOKEN', (botToken) =>
    checkDiscord({ ...config.discord, botToken }),
  );
}

async function setupSlack(flags: SetupFlags, config: Config): Promise<number> {
  const explicitSocket =
    flags.socket === true || (!flags.publicUrl && config.slack.appToken !== undefined);
  const publicUrl = explicitSocket ? undefined : (flags.publicUrl ?? config.publicUrl);
  const refused = publicUrl ? plainHttp(publicUrl) : undefined;
  if (refused) {
    console.error(`setup slack: --public-url ${refused}`);
    return 2;
  }
  const socket = publicUrl === undefined;
  if (socket && !explicitSocket) {
    // No URL given: Socket Mode needs none, so that is the manifest a newcomer can use at once.
    console.log(
      'No public URL (--public-url or PHASEBRIDGE_PUBLIC_URL): Socket Mode. For HTTP mode pass --public-url https://<bridge>.\n',
    );
  }
  const command = flags.command ?? config.slack.command;
  const manifest = slackManifest({ name: flags.name, command, ...(publicUrl && { publicUrl }) });
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const yaml = stringify(manifest);
  if (flags.out) {
    writeFileSync(flags.out, yaml);
    console.log(`Wrote the ${socket ? 'Socket Mode' : 'HTTP mode'} manifest to ${flags.out}.\n`);
  }
  print(slackGuide({ publicUrl, command, manifestFile: flags.out }));
  console.log(
    `\n# Slack app manifest (${socket ? 'Socket Mode' : 'HTTP mode'})\n${yaml}# end of manifest`,
  );
  return check(flags, config.slack.botToken, 'SLACK_BOT_TOKEN', (botToken) =>
    checkSlack({ ...config.slack, botToken }),
  );
}

/** The application id: DISCORD_APPLICATION_ID, else asked of the API with the token. */
export async function discordApplicationId(config: Config): Promise<string | undefined> {
  const d = config.discord;
  if (d.applicationId || !d.botToken) return d.applicationId;
  const root = `${(d.apiUrl ?? API_ROOTS.discord).replace(/\/$/, '')}/v10`;
  const app = await probe(`${root}/applications/@me`, {
    headers: { authorization: `Bot ${d.botToken}` },
  }).catch(() => undefined); // the check below reports why
  return app?.status === 200 ? String(app.body.id) : undefined;
}

/** Why `url` cannot be a public URL (not a URL, or plain http off loopback); undefined when fine. */
export function plainHttp(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${url} is not an absolute https URL`;
  }
  if (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname))) return;
  return `${url} must be https (Slack and Telegram only call https URLs; http only for localhost)`;
}

function print(lines: string[]): void {
  console.log(lines.join('\n'));
}

/**
 * Runs the platform check when the token is set. Otherwise, on a terminal (or `--interactive`),
 * asks for it and checks it without storing it; else says how to set it. Returns the exit code.
 */
async function check(
  flags: SetupFlags,
  configured: string | undefined,
  env: string,
  run: (token: string) => Promise<CheckResult[]>,
): Promise<number> {
  let token = configured;
  const asked = !token && (flags.interactive ?? process.stdin.isTTY === true);
  if (asked) token = await askToken(`\nPaste the bot token to check it now (Enter skips): `);
  if (!token) {
    console.log(`\nNext: set ${env}, then run this again to check the token.`);
    return 0;
  }
  console.log('\nChecking the token:');
  const results = await run(token);
  for (const r of results) {
    console.log(`${r.ok ? 'ok    ' : 'failed'}  ${r.name}: ${r.detail}`);
    if (!r.ok && r.fix) console.log(`        fix: ${r.fix}`);
  }
  const ok = results.every((r) => r.ok);
  if (ok && asked) {
    console.log(
      `\nThe token works. Put it in the bridge's environment as ${env} (it is not stored).`,
    );
  }
  console.log(
    ok
      ? '\nNext: `phasebridge serve`, then pair a chat with the code (or link) it prints.'
      : '\nFix the above, then run this again.',
  );
  return ok ? 0 : 1;
}

/** One line from stdin; on a terminal the typed characters are shown as `*`. */
async function askToken(question: string): Promise<string | undefined> {
  const { createInterface } = await import('node:readline');
  const tty = process.stdin.isTTY === true;
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: tty });
  if (tty) {
    // readline echoes through this method: mask what is typed after the question.
    const echo = rl as unknown as { _writeToOutput: (s: string) => void };
    echo._writeToOutput = (s: string) => {
      process.stdout.write(s.startsWith(question) ? question : s.replace(/[^\r\n]/g, '*'));
    };
  }
  const answer = await new Promise<string | undefined>((resolve) => {
    rl.question(question, (a) => resolve(a.trim() === '' ? undefined : a.trim()));
    rl.once('close', () => resolve(undefined));
  });
  rl.close();
  return answer;
}
