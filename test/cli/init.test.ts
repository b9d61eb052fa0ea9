/**
 * `phasebridge init`, driven as a script would (every answer a flag) and as a person would
 * (answers on stdin): it prints the platform's steps, writes the config without secrets, runs
 * doctor against the platform, and ends with the message to send; that message, sent in the chat
 * to the bridge started on that config, pairs the chat with the chosen workspace.
 * Real CLI process, real bridge, the real Telegram adapter against the local fake.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { slow } from '../support/slowdown.ts';
import { runCliAsync } from './support.ts';

const ALICE = { id: 501, is_bot: false, first_name: 'Alice', username: 'alice' };
const DM = { id: 501, type: 'private' as const };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tmp(): { home: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-init-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { home: path.join(dir, 'home'), dir };
}

async function fakeTelegram(): Promise<FakeTelegram> {
  const fake = await FakeTelegram.start();
  cleanups.push(() => fake.close());
  return fake;
}

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + slow(20_000);
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('phasebridge init', () => {
  it('from flags alone: steps, config, doctor, and a message that pairs the chat', async () => {
    const fake = await fakeTelegram();
    const { home, dir } = tmp();
    const workspace = path.join(dir, 'project');
    const env = { TELEGRAM_BOT_TOKEN: fake.token, TELEGRAM_API_ROOT: fake.apiRoot };
    const r = await runCliAsync(
      ['init', '--platforms', 'telegram', '--workspace', workspace],
      home,
      dir,
      env,
    );
    expect(r.code).toBe(0);
    // Nothing asked: the answers came from flags, stdin was not a terminal.
    expect(r.out).not.toContain('Which platforms?');
    expect(r.out).toContain('@BotFather, send /newbot');
    expect(r.out).toContain('Updates by long polling');
    expect(r.out).toMatch(/^ok +bridge\.db: /m);
    expect(r.out).toMatch(/^ok +telegram: bot @phasebridge_bot/m);

    const file = path.join(dir, 'phasebridge.config.yaml');
    const text = fs.readFileSync(file, 'utf8');
    expect(parse(text)).toEqual({ workspace });
    expect(text).not.toContain(fake.token);
    expect(fs.statSync(workspace).isDirectory()).toBe(true);

    // The last lines are what to send; the token is set, so no "set in the environment" step.
    expect(r.out).not.toContain('Set in the bridge');
    const message =
      /^ {3}Telegram \(private chat with the bot, or the group\): (\/pair \S+)$/m.exec(r.out)?.[1];
    expect(message).toBeDefined();
    expect(r.out.trimEnd().split('\n').at(-1)).toMatch(
      /Each code pairs one chat, once, until \d\d:\d\d UTC/,
    );

    // The bridge started on that config pairs the chat that sends the message.
    const config = loadConfig({
      env: { ...env, PHASEBRIDGE_HOME: home, PHASEBRIDGE_PORT: '0' },
      cwd: dir,
    });
    expect(config.workspace).toBe(workspace);
    const bridge = await startBridge(config, createLogger({ level: 'silent' }), { worker: false });
    cleanups.push(() => bridge.stop());
    fake.userSends({ chat: DM, from: ALICE, text: message! });
    const reply = await until(
      'the answer to the pairing message',
      () => fake.botMessages(DM.id)[0],
    );
    expect(reply.text).toMatch(/paired/i);
    const binding = await bridge.repos.bindings.find(`telegram:${DM.id}`);
    expect(binding?.workspace).toBe(workspace);
  });

  it('asks what no flag answers, one line each, and says which secrets are still to set', async () => {
    const { home, dir } = tmp();
    const workspace = path.join(dir, 'ws');
    const r = await runCliAsync(
      ['init', '--interactive'],
      home,
      dir,
      {},
      `slack, telegram\n${workspace}\nhttps://pb.example.test/\n\n`,
    );
    expect(r.code).toBe(0);
    expect(r.out).toContain('Which platforms?');
    expect(r.out).toContain('Slack (HTTP mode)');
    expect(r.out).toContain('Telegram\n1. In Telegram, open @BotFather');
    // Slack's manifest is written for pasting, with the URL from the answer.
    const manifest = parse(fs.readFileSync(path.join(dir, 'slack-manifest.yaml'), 'utf8'));
    expect(manifest.settings.event_subscriptions.request_url).toBe(
      'https://pb.example.test/slack/events',
    );
    const config = parse(fs.readFileSync(path.join(dir, 'phasebridge.config.yaml'), 'utf8'));
    expect(config).toEqual({ workspace, publicUrl: 'https://pb.example.test/' });
    expect(r.out).toContain(
      "Set in the bridge's environment (never in a file): TELEGRAM_BOT_TOKEN, SLACK_SIGNING_SECRET.",
    );
    // Slack's bot token comes after the URL check, which needs the bridge running.
    expect(r.out).toContain('Slack: with it running, verify the request URL, install the app');
    expect(r.out).toMatch(
      /^ {3}Slack \(in the channel, after \/invite of the bot\): \/pb pair \S+$/m,
    );
  });

  it('still prints the steps when the environment does not fit the answers, then says what to fix', async () => {
    const { home, dir } = tmp();
    const args = ['init', '--platforms', 'telegram', '--webhook-url', 'https://pb.example.test/tg'];
    // A webhook needs its secret: the steps say so, and so does the check.
    const r = await runCliAsync(args, home, dir, { TELEGRAM_BOT_TOKEN: '123456:token-for-init' });
    expect(r.code).toBe(1);
    expect(r.out).toContain('Updates by webhook: Telegram POSTs to https://pb.example.test/tg');
    expect(r.out).toMatch(
      /^failed {2}config: TELEGRAM_WEBHOOK_SECRET: webhook mode needs a secret/m,
    );
    expect(r.out.trimEnd().split('\n').at(-1)).toBe(
      'Fix the above, then run `phasebridge doctor`.',
    );
    expect(parse(fs.readFileSync(path.join(dir, 'phasebridge.config.yaml'), 'utf8'))).toEqual({
      workspace: dir,
      telegram: { webhookUrl: 'https://pb.example.test/tg' },
    });
  });

  it('with no platform, ends with what to type in the console', async () => {
    const { home, dir } = tmp();
    const r = await runCliAsync(['setup', '--platforms', 'none'], home, dir);
    expect(r.code).toBe(0);
    expect(r.out.trimEnd().split('\n').slice(-2)).toEqual(['', '   run demo add a login page']);
  });

  it("keeps setup's --command and --name: manifest, config and the pairing line all use them", async () => {
    const { home, dir } = tmp();
    const r = await runCliAsync(
      ['setup', '--platforms', 'slack', '--socket', '--command', '/agent', '--name', 'teambot'],
      home,
      dir,
    );
    expect(r.code).toBe(0);
    const manifest = parse(fs.readFileSync(path.join(dir, 'slack-manifest.yaml'), 'utf8'));
    expect(manifest.display_information.name).toBe('teambot');
    expect(manifest.features.bot_user.display_name).toBe('teambot');
    expect(manifest.features.slash_commands[0].command).toBe('/agent');
    // The config keeps the command, so the bridge answers the command the manifest registered.
    const config = parse(fs.readFileSync(path.join(dir, 'phasebridge.config.yaml'), 'utf8'));
    expect(config).toEqual({ workspace: dir, slack: { command: '/agent' } });
    expect(r.out).toMatch(
      /^ {3}Slack \(in the channel, after \/invite of the bot\): \/agent pair \S+$/m,
    );

    const bad = await runCliAsync(
      ['init', '--platforms', 'slack', '--socket', '--slack-command', 'agent', '--force'],
      home,
      dir,
    );
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('--slack-command "agent" must be a slash command such as /pb');
    expect(parse(fs.readFileSync(path.join(dir, 'phasebridge.config.yaml'), 'utf8'))).toEqual(
      config,
    );
  });

  it('refuses a bad answer (exit 2) and an existing config (exit 1), changing nothing', async () => {
    const { home, dir } = tmp();
    const bad = await runCliAsync(['init', '--platforms', 'matrix'], home, dir);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      'init: unknown platform "matrix": use telegram, slack, discord or none',
    );
    const plain = await runCliAsync(
      ['init', '--platforms', 'telegram', '--webhook-url', 'http://pb.example.test/tg'],
      home,
      dir,
    );
    expect(plain.code).toBe(2);
    expect(plain.err).toContain('must be https');
    expect(fs.existsSync(path.join(dir, 'phasebridge.config.yaml'))).toBe(false);

    const file = path.join(dir, 'phasebridge.config.yaml');
    fs.writeFileSync(file, 'port: 8080\n');
    const again = await runCliAsync(['init', '--platforms', 'none'], home, dir);
    expect(again.code).toBe(1);
    expect(again.err).toContain('exists: edit it, or pass --force');
    expect(fs.readFileSync(file, 'utf8')).toBe('port: 8080\n');
  });
});
