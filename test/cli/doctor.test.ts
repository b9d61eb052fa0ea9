/**
 * `phasebridge doctor` tells failures apart and gives the fix for each: a closed port (network),
 * plain HTTP spoken to as HTTPS (TLS), a refused token, a missing Slack scope, a Discord token of
 * another application, a failing Telegram webhook. Real CLI process against the local fakes.
 */
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { classifyFetchError } from '../../src/cli/platform-probe.ts';
import { FakeDiscord } from '../fakes/discord.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { runCliAsync } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmpHome(): { home: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-doctor-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { home: path.join(dir, 'home'), dir };
}

async function doctor(env: Record<string, string>) {
  const { home, dir } = tmpHome();
  await runCliAsync(['migrate'], home, dir);
  return runCliAsync(['doctor'], home, dir, env);
}

/** The line of one check and its fix line, if any. */
function lineOf(out: string, name: string): string {
  const lines = out.split('\n');
  const i = lines.findIndex((l) => l.includes(` ${name}: `));
  if (i < 0) throw new Error(`no "${name}" line in:\n${out}`);
  const fix = lines[i + 1]?.trim().startsWith('fix:') ? `\n${lines[i + 1]}` : '';
  return `${lines[i]}${fix}`;
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function fakes() {
  const telegram = await FakeTelegram.start();
  const slack = await FakeSlack.start();
  const discord = await FakeDiscord.start();
  cleanups.push(
    () => telegram.close(),
    () => slack.close(),
    () => discord.close(),
  );
  const env = {
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_API_ROOT: telegram.apiRoot,
    SLACK_BOT_TOKEN: slack.botToken,
    SLACK_SIGNING_SECRET: slack.signingSecret,
    SLACK_API_URL: slack.apiUrl,
    DISCORD_BOT_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
  };
  return { telegram, slack, discord, env };
}

describe('phasebridge doctor', () => {
  it('passes every platform when tokens, scopes and application match (no DISCORD_APPLICATION_ID)', async () => {
    const { discord, env } = await fakes();
    const r = await doctor(env);
    expect(withoutBuildNote(r.err)).toBe('');
    expect(r.code).toBe(0);
    expect(lineOf(r.out, 'telegram')).toMatch(
      /^ok +telegram: bot @phasebridge_bot, privacy mode on/,
    );
    expect(lineOf(r.out, 'telegram webhook')).toMatch(/polling mode, 0 pending update\(s\)/);
    expect(lineOf(r.out, 'slack')).toMatch(
      /^ok +slack: team Fake, bot user phasebridge, scopes complete/,
    );
    expect(lineOf(r.out, 'discord')).toContain(
      `application phasebridge (${discord.state.applicationId}), intents Guilds, GuildMessages, DirectMessages; the Message Content intent is off, so replies to run messages are not seen as guidance (Developer Portal → your application → Bot → Privileged Gateway Intents → Message Content on, then restart phasebridge serve)`,
    );
    expect(lineOf(r.out, 'discord')).toContain('Privileged Gateway Intents → Message Content on');
  });

  it('passes a Slack app installed before users:read, saying what it lacks', async () => {
    const { slack, env } = await fakes();
    slack.scopes = slack.scopes.filter((s) => s !== 'users:read');
    const r = await doctor(env);
    expect(lineOf(r.out, 'slack')).toMatch(
      /^ok +slack: team Fake, bot user phasebridge, scopes complete but optional users:read \(people seen only in thread replies are shown by id\)/,
    );
  });

  it('names a Discord permission the invite did not grant and what it disables', async () => {
    const { discord, env } = await fakes();
    const r0 = await doctor(env);
    expect(lineOf(r0.out, 'discord permissions')).toMatch(
      /^ok +discord permissions: all 6 needed in 1 server\(s\)/,
    );
    // The invite of an earlier release: no Create Public Threads.
    discord.state.guildPermissions &= ~(1n << 35n);
    const r = await doctor(env);
    expect(r.code).toBe(1);
    expect(lineOf(r.out, 'discord permissions')).toMatch(
      /^failed +discord permissions: server Phasebridge Test lacks CreatePublicThreads: replies open no thread and go in the channel instead\n +fix: grant them to the bot's role .*https:\/\/discord\.com\/oauth2\/authorize\?client_id=\d+&scope=bot%20applications\.commands&permissions=309237697536/,
    );
  }, 60_000);

  it('names a refused token with the fix for each platform', async () => {
    const { env } = await fakes();
    const r = await doctor({
      ...env,
      TELEGRAM_BOT_TOKEN: '999999:not-the-right-token',
      SLACK_BOT_TOKEN: 'xoxb-revoked-token',
      DISCORD_BOT_TOKEN: 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GwrongX.wrong-token-for-tests-0123456789',
    });
    expect(r.code).toBe(1);
    expect(lineOf(r.out, 'telegram')).toMatch(
      /failed +telegram: the token was refused \(401 Unauthorized\)\n +fix: .*@BotFather/,
    );
    expect(lineOf(r.out, 'slack')).toMatch(
      /auth.test refused the token: invalid_auth\n +fix: .*Bot User OAuth Token/,
    );
    expect(lineOf(r.out, 'discord')).toMatch(/refused \(401\)\n +fix: .*Reset Token/);
    expect(r.out).not.toContain('999999:not-the-right-token');
  });

  it('names a missing Slack scope, another Discord application and a failing webhook', async () => {
    const { telegram, slack, env } = await fakes();
    slack.scopes = ['commands', 'chat:write'];
    telegram.webhook = { url: 'https://pb.example.test/telegram', secret: 'x' };
    telegram.webhookError = {
      last_error_date: 1_700_000_000,
      last_error_message: 'Connection refused',
    };
    const r = await doctor({
      ...env,
      TELEGRAM_WEBHOOK_URL: 'https://pb.example.test/telegram',
      TELEGRAM_WEBHOOK_SECRET: 'secret-secret-1',
      DISCORD_APPLICATION_ID: '123456789012345678',
    });
    expect(r.code).toBe(1);
    expect(lineOf(r.out, 'slack')).toMatch(
      /lacks scope\(s\) app_mentions:read, channels:history, groups:history, files:read, files:write\n +fix: .*Bot Token Scopes.*reinstall/,
    );
    expect(lineOf(r.out, 'discord')).toMatch(
      /DISCORD_APPLICATION_ID is 123456789012345678 but the token belongs to application \d+\n +fix: unset DISCORD_APPLICATION_ID/,
    );
    expect(lineOf(r.out, 'telegram webhook')).toMatch(
      /last delivery failed at 2023-11-14T22:13:20.000Z: Connection refused; 0 pending update\(s\)\n +fix: make https:\/\/pb.example.test\/telegram reachable/,
    );
  });

  it('tells an unreachable API (closed port) from a TLS failure', async () => {
    const { slack } = await fakes();
    const port = await closedPort();
    const r = await doctor({
      TELEGRAM_BOT_TOKEN: '123456:TEST-token_abc',
      TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
      // HTTPS spoken to a plain-HTTP server: the handshake fails.
      SLACK_BOT_TOKEN: slack.botToken,
      SLACK_SIGNING_SECRET: slack.signingSecret,
      SLACK_API_URL: slack.apiUrl.replace('http://', 'https://'),
    });
    expect(r.code).toBe(1);
    expect(lineOf(r.out, 'telegram')).toMatch(
      new RegExp(
        `network unreachable.*127.0.0.1:${port}: ECONNREFUSED\\)\\n +fix: .*TELEGRAM_API_ROOT`,
      ),
    );
    expect(lineOf(r.out, 'slack')).toMatch(
      /TLS handshake or certificate failed .*\n +fix: .*clock/,
    );
  });
});

describe('classifyFetchError', () => {
  it('tells DNS from network, TLS and timeout by the nested code', () => {
    const fetchFailed = (code: string) =>
      Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error(code), { code }),
      });
    expect(classifyFetchError(fetchFailed('ENOTFOUND'))).toEqual({
      kind: 'dns',
      code: 'ENOTFOUND',
    });
    expect(classifyFetchError(fetchFailed('EAI_AGAIN')).kind).toBe('dns');
    expect(classifyFetchError(fetchFailed('ENETUNREACH')).kind).toBe('network');
    expect(classifyFetchError(fetchFailed('CERT_HAS_EXPIRED')).kind).toBe('tls');
    expect(classifyFetchError(fetchFailed('ERR_TLS_CERT_ALTNAME_INVALID')).kind).toBe('tls');
    expect(classifyFetchError(new DOMException('timed out', 'TimeoutError')).kind).toBe('timeout');
  });
});

/** stderr without the note bin/phasebridge.js prints when it rebuilds dist/ first. */
function withoutBuildNote(err: string): string {
  return err.replace(/^phasebridge: building dist\/.*\n/m, '');
}
