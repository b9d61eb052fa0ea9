/**
 * `phasebridge setup telegram|slack|discord` driven by its flags: the Slack manifest parses and
 * lists exactly the scopes table, with the request URLs under /slack/ (HTTP) or none (Socket
 * Mode); the Discord invite URL carries the exact scopes and permission integer; each token is
 * checked against its platform. Real CLI process against the local fakes.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PermissionFlagsBits } from 'discord.js';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DISCORD_PERMISSIONS,
  discordPermissionInteger,
} from '../../src/bridges/discord/permissions.ts';
import { slackBotEvents, slackBotScopes } from '../../src/bridges/slack/scopes.ts';
import { FakeDiscord } from '../fakes/discord.ts';
import { FakeSlack } from '../fakes/slack.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { runCliAsync } from './support.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(): { home: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-setup-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { home: path.join(dir, 'home'), dir };
}

function setup(args: string[], env: Record<string, string> = {}) {
  const { home, dir } = tmp();
  return { dir, result: runCliAsync(['setup', ...args], home, dir, env) };
}

describe('phasebridge setup slack', () => {
  it('writes an HTTP-mode manifest from the scopes table and checks the token', async () => {
    const slack = await FakeSlack.start();
    cleanups.push(() => slack.close());
    const { dir, result } = setup(
      ['slack', '--public-url', 'https://pb.example.test/', '--out', 'manifest.yaml'],
      {
        SLACK_BOT_TOKEN: slack.botToken,
        SLACK_SIGNING_SECRET: slack.signingSecret,
        SLACK_API_URL: slack.apiUrl,
        SLACK_COMMAND: '/agents',
      },
    );
    const r = await result;
    expect(withoutBuildNote(r.err)).toBe('');
    expect(r.code).toBe(0);
    const manifest = parse(fs.readFileSync(path.join(dir, 'manifest.yaml'), 'utf8'));
    const url = 'https://pb.example.test/slack/events';
    expect(manifest.oauth_config.scopes.bot).toEqual(slackBotScopes());
    expect(manifest.oauth_config.scopes.bot).toEqual([
      'commands',
      'app_mentions:read',
      'channels:history',
      'groups:history',
      'chat:write',
      'files:read',
      'files:write',
      // users.info names a person whose thread reply carries their id only (issue 29).
      'users:read',
    ]);
    // Thread replies under run messages (guidance) come as message events.
    expect(slackBotEvents()).toEqual(['app_mention', 'message.channels', 'message.groups']);
    expect(manifest.features.slash_commands).toEqual([
      expect.objectContaining({ command: '/agents', url, should_escape: false }),
    ]);
    expect(manifest.settings).toMatchObject({
      event_subscriptions: { request_url: url, bot_events: slackBotEvents() },
      interactivity: { is_enabled: true, request_url: url },
      socket_mode_enabled: false,
    });
    // The same manifest is printed, after the steps.
    expect(printedManifest(r.out)).toEqual(manifest);
    expect(r.out).toContain(`Slack sends commands, events and button presses to ${url}`);
    expect(r.out).toMatch(/ok +slack: team Fake, bot user phasebridge, scopes complete/);
  });

  it('prints a Socket Mode manifest without request URLs', async () => {
    const r = await setup(['slack', '--socket']).result;
    expect(r.code).toBe(0);
    const manifest = printedManifest(r.out);
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(JSON.stringify(manifest)).not.toMatch(/url/);
    expect(manifest.features.slash_commands[0].command).toBe('/pb');
    expect(r.out).toContain('Next: set SLACK_BOT_TOKEN');
  });

  it('writes a Socket Mode manifest with --out alone, naming the flag for HTTP mode', async () => {
    const { dir, result } = setup(['slack', '--out', 'm.yaml']);
    const r = await result;
    expect(r.code).toBe(0);
    const manifest = parse(fs.readFileSync(path.join(dir, 'm.yaml'), 'utf8'));
    expect(manifest.settings.socket_mode_enabled).toBe(true);
    expect(r.out.split('\n')[0]).toBe(
      'No public URL (--public-url or PHASEBRIDGE_PUBLIC_URL): Socket Mode. For HTTP mode pass --public-url https://<bridge>.',
    );
    expect(r.out).toContain('Wrote the Socket Mode manifest to m.yaml.');
  });

  it('prints the HTTP-mode steps in the order that works: secret, serve, verify, install', async () => {
    const r = await setup(['slack', '--public-url', 'https://pb.example.test/']).result;
    expect(r.code).toBe(0);
    const at = (text: string) => {
      const i = r.out.indexOf(text);
      expect(i, text).toBeGreaterThan(-1);
      return i;
    };
    const order = [
      at('Create New App → From a manifest'),
      at('export SLACK_SIGNING_SECRET'),
      at("answers Slack's URL check before any token exists"),
      at('Event Subscriptions → Retry'),
      at('export SLACK_BOT_TOKEN'),
      at('pair CODE'),
    ];
    expect([...order].sort((a, b) => a - b)).toEqual(order);
  });

  it('refuses a plain http public URL, localhost excepted', async () => {
    const r = await setup(['slack', '--public-url', 'http://pb.example.test/']).result;
    expect(r.code).toBe(2);
    expect(withoutBuildNote(r.err).trim()).toBe(
      'setup slack: --public-url http://pb.example.test/ must be https (Slack and Telegram only call https URLs; http only for localhost)',
    );
    const local = await setup(['slack', '--public-url', 'http://localhost:7717/']).result;
    expect(local.code).toBe(0);
    expect(local.out).toContain('http://localhost:7717/slack/events');
  });
});

describe('phasebridge setup discord', () => {
  it('prints the invite URL for the application the token belongs to', async () => {
    const discord = await FakeDiscord.start();
    cleanups.push(() => discord.close());
    const r = await setup(['discord'], {
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
    }).result;
    expect(r.code).toBe(0);
    const invite = new URL(/https:\/\/discord\.com\/oauth2\/authorize\?\S+/.exec(r.out)![0]);
    expect(Object.fromEntries(invite.searchParams)).toEqual({
      client_id: discord.state.applicationId,
      scope: 'bot applications.commands',
      permissions: '309237697536',
    });
    expect(r.out).toContain('Intents: Guilds, GuildMessages, DirectMessages (not privileged)');
    expect(r.out).toContain('Privileged Gateway Intents turn Message Content on');
    expect(r.out).toMatch(/ok +discord: application phasebridge/);
  });

  it('computes the permission integer from the named list (bits as discord.js has them)', () => {
    for (const p of DISCORD_PERMISSIONS) {
      expect(p.bit, p.name).toBe(PermissionFlagsBits[p.name as keyof typeof PermissionFlagsBits]);
    }
    expect(discordPermissionInteger()).toBe('309237697536');
  });
});

describe('phasebridge setup telegram', () => {
  it('walks through BotFather, privacy mode and the webhook, then checks the token', async () => {
    const telegram = await FakeTelegram.start();
    cleanups.push(() => telegram.close());
    const r = await setup(['telegram', '--webhook-url', 'https://pb.example.test/tg/hook'], {
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
    }).result;
    expect(r.code).toBe(0);
    expect(r.out).toContain('@BotFather, send /newbot');
    expect(r.out).toContain('privacy mode stays on');
    expect(r.out).toContain("serves that URL's path\n   (/tg/hook)");
    expect(r.out).toMatch(/ok +telegram: bot @phasebridge_bot, privacy mode on/);
  });

  it('asks for a token when none is set, checks it and does not keep it', async () => {
    const telegram = await FakeTelegram.start();
    cleanups.push(() => telegram.close());
    const { home, dir } = tmp();
    const r = await runCliAsync(
      ['setup', 'telegram', '--interactive'],
      home,
      dir,
      { TELEGRAM_API_ROOT: telegram.apiRoot },
      `${telegram.token}\n`,
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('Paste the bot token to check it now');
    expect(r.out).toMatch(/ok +telegram: bot @phasebridge_bot/);
    expect(r.out).toContain("Put it in the bridge's environment as TELEGRAM_BOT_TOKEN");
    expect(fs.existsSync(home) ? fs.readdirSync(home).join() : '').not.toContain(telegram.token);
  });

  it('refuses an unknown platform', async () => {
    const r = await setup(['matrix']).result;
    expect(r.code).toBe(2);
    expect(r.err).toContain('unknown platform "matrix": use telegram, slack, discord');
  });
});

/** stderr without the note bin/phasebridge.js prints when it rebuilds dist/ first. */
function withoutBuildNote(err: string): string {
  return err.replace(/^phasebridge: building dist\/.*\n/m, '');
}

/** The manifest as printed between its header and end comments. */
function printedManifest(out: string): ReturnType<typeof parse> {
  return parse(out.slice(out.indexOf('# Slack app manifest'), out.indexOf('# end of manifest')));
}
