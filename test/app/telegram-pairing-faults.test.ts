/**
 * Telegram pairing in one tap and polling that dies while running: the bridge offers the t.me deep
 * link, `/start <code>` (what the link sends) pairs the chat, and a second poller on the token
 * (409) or a revoked token (401) is logged once and shown in /readyz instead of silence.
 * Real bridge, real HTTP, the real Telegram adapter against the local fake.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { runCliAsync } from '../cli/support.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { holdsFor, slow } from '../support/slowdown.ts';

const ALICE = { id: 501, is_bot: false, first_name: 'Alice', username: 'alice' };
const DM = { id: 501, type: 'private' as const };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + slow(20_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Check {
  name: string;
  ok: boolean;
  detail?: string;
}

async function telegramCheck(bridge: RunningBridge): Promise<Check | undefined> {
  const res = await fetch(`${bridge.url}/readyz`);
  const body = (await res.json()) as { checks: Check[] };
  return body.checks.find((c) => c.name === 'telegram');
}

/** A bridge on the fake, with its log lines collected. */
async function start(
  fake: FakeTelegram,
): Promise<{ bridge: RunningBridge; lines: string[]; dir: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-tg-faults-'));
  const config = loadConfig({
    env: {
      PHASEBRIDGE_HOME: path.join(dir, 'home'),
      PHASEBRIDGE_PORT: '0',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
    },
    cwd: dir,
  });
  const lines: string[] = [];
  const destination = { write: (line: string) => void lines.push(line) };
  const log = createLogger({ level: 'info', pretty: false, destination });
  const bridge = await startBridge(config, log, { worker: false });
  cleanups.push(async () => {
    await bridge.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { bridge, lines, dir };
}

async function fakeTelegram(): Promise<FakeTelegram> {
  const fake = await FakeTelegram.start();
  cleanups.push(() => fake.close());
  return fake;
}

describe('Telegram pairing in one tap', () => {
  it('offers the t.me deep link, and /start <code> pairs the chat', async () => {
    const fake = await fakeTelegram();
    const { bridge } = await start(fake);
    expect(bridge.pairingLinks).toEqual({
      telegram: `https://t.me/${fake.bot.username}?start=${bridge.pairingCode}`,
    });

    fake.userSends({ chat: DM, from: ALICE, text: `/start ${bridge.pairingCode}` });
    const reply = await until('an answer to /start', async () => fake.botMessages(DM.id)[0]);
    expect(reply.text).toMatch(/paired/i);
    expect(await bridge.repos.bindings.find(`telegram:${DM.id}`)).not.toBeNull();
  });
});

describe('Telegram polling that dies while running', () => {
  for (const [code, description, expected] of [
    [409, 'Conflict: terminated by other getUpdates request', /another process is polling/],
    [401, 'Unauthorized', /token was refused/],
  ] as const) {
    it(`reports a ${code} once in the log and in /readyz`, async () => {
      const fake = await fakeTelegram();
      const { bridge, lines } = await start(fake);
      expect(await telegramCheck(bridge)).toEqual({ name: 'telegram', ok: true });

      fake.failNext('getUpdates', code, description);
      // Wakes the long poll in progress, so the next getUpdates meets the failure.
      fake.pushUpdate({});
      const check = await until('telegram not ready', async () => {
        const c = await telegramCheck(bridge);
        return c?.ok === false ? c : undefined;
      });
      expect(check.detail).toMatch(expected);
      expect(check.detail).not.toContain(fake.token);

      // Once at error level (each /readyz request adds its own warn line, as for any probe).
      const errorLines = () => lines.filter((l) => expected.test(l) && JSON.parse(l).level === 50);
      await holdsFor(() => errorLines().length <= 1, 300, 'reported more than once');
      const reported = errorLines();
      expect(reported).toHaveLength(1);
      expect(JSON.parse(reported[0]!).component).toBe('telegram');
      // Not retried: no getUpdates after the failed one.
      const polls = fake.calls.filter((c) => c.method === 'getUpdates');
      expect(polls.at(-1)).toMatchObject({ ok: false, errorCode: code });
    });
  }
});

describe('doctor next to a running bridge', () => {
  it('names the second poller the bridge met, with the fix', async () => {
    const fake = await fakeTelegram();
    const { bridge, dir } = await start(fake);
    fake.failNext('getUpdates', 409, 'Conflict: terminated by other getUpdates request');
    fake.pushUpdate({});
    await until('telegram not ready', async () => {
      const c = await telegramCheck(bridge);
      return c?.ok === false ? c : undefined;
    });
    const port = new URL(bridge.url).port;
    const doctor = await runCliAsync(['doctor'], path.join(dir, 'home'), dir, {
      PHASEBRIDGE_PORT: port,
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
    });
    expect(doctor.code).toBe(1);
    expect(doctor.out).toMatch(
      /^failed {2}bridge: telegram: telegram stopped: another process is polling/m,
    );
    expect(doctor.out).toMatch(/^ {8}fix: stop the other process polling this bot token/m);
    expect(doctor.out).not.toContain(fake.token);
  });
});
