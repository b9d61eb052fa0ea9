/**
 * What `phasebridge setup <platform>` prints and checks. Loaded only by that command: it pulls
 * in the YAML writer and the platform checks.
 */
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Config } from '../../config.ts';
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
}

/** Prints the guide for `platform` and checks its token when set; returns the exit code. */
export async function runSetup(
  platform: 'telegram' | 'slack' | 'discord',
  flags: SetupFlags,
  config: Config,
): Promise<number> {
  if (platform === 'telegram') {
    print(telegramGuide({ webhookUrl: flags.webhookUrl ?? config.telegram.webhookUrl }));
    return check(config.telegram.botToken, 'TELEGRAM_BOT_TOKEN', () =>
      checkTelegram(config.telegram),
    );
  }
  if (platform === 'slack') return setupSlack(flags, config);
  const applicationId = flags.applicationId ?? (await discordApplicationId(config));
  print(discordGuide({ applicationId }));
  return check(config.discord.botToken, 'DISCORD_BOT_TOKEN', () => checkDiscord(config.discord));
}

async function setupSlack(flags: SetupFlags, config: Config): Promise<number> {
  const socket = flags.socket === true || (!flags.publicUrl && config.slack.appToken !== undefined);
  const publicUrl = socket ? undefined : (flags.publicUrl ?? config.publicUrl);
  if (!socket && !publicUrl) {
    console.error(
      'setup slack: HTTP mode needs the public https URL of the bridge: set PHASEBRIDGE_PUBLIC_URL or pass --public-url; or pass --socket for Socket Mode',
    );
    return 2;
  }
  const command = flags.command ?? config.slack.command;
  const manifest = slackManifest({ name: flags.name, command, ...(publicUrl && { publicUrl }) });
  const { stringify } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  const yaml = stringify(manifest);
  if (flags.out) writeFileSync(flags.out, yaml);
  print(slackGuide({ publicUrl, command, manifestFile: flags.out }));
  console.log(
    `\n# Slack app manifest (${socket ? 'Socket Mode' : 'HTTP mode'})\n${yaml}# end of manifest`,
  );
  return check(config.slack.botToken, 'SLACK_BOT_TOKEN', () => checkSlack(config.slack));
}

/** The application id: DISCORD_APPLICATION_ID, else asked of the API with the token. */
async function discordApplicationId(config: Config): Promise<string | undefined> {
  const d = config.discord;
  if (d.applicationId || !d.botToken) return d.applicationId;
  const root = `${(d.apiUrl ?? API_ROOTS.discord).replace(/\/$/, '')}/v10`;
  const app = await probe(`${root}/applications/@me`, {
    headers: { authorization: `Bot ${d.botToken}` },
  }).catch(() => undefined); // the check below reports why
  return app?.status === 200 ? String(app.body.id) : undefined;
}

function print(lines: string[]): void {
  console.log(lines.join('\n'));
}

/** Runs the platform check when the token is set, else says how to set it; returns exit code. */
async function check(
  token: string | undefined,
  env: string,
  run: () => Promise<CheckResult[]>,
): Promise<number> {
  if (!token) {
    console.log(`\nNext: set ${env}, then run this again to check the token.`);
    return 0;
  }
  console.log('\nChecking the token:');
  const results = await run();
  for (const r of results) {
    console.log(`${r.ok ? 'ok    ' : 'failed'}  ${r.name}: ${r.detail}`);
    if (!r.ok && r.fix) console.log(`        fix: ${r.fix}`);
  }
  const ok = results.every((r) => r.ok);
  console.log(
    ok
      ? '\nNext: `phasebridge serve`, then pair a chat with the code (or link) it prints.'
      : '\nFix the above, then run this again.',
  );
  return ok ? 0 : 1;
}
