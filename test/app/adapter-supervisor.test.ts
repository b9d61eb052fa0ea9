/**
 * A chat platform that does not answer when the bridge starts: the bridge serves anyway (console,
 * other adapters), /readyz names the adapter and its last error, and once the platform answers
 * the adapter starts on its own and /readyz turns 200. Real HTTP, real adapters, local fakes.
 */
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ADAPTER_RETRY, retryDelay } from '../../src/app/adapter-supervisor.ts';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { FakeDiscord } from '../fakes/discord.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { signIn } from '../support/console-login.ts';
import { slow } from '../support/slowdown.ts';

const TELEGRAM_TOKEN = '123456:TEST-token_abc';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A port nothing listens on (yet). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

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
  error?: string;
  detail?: string;
}

async function readyz(bridge: RunningBridge): Promise<{ status: number; checks: Check[] }> {
  const res = await fetch(`${bridge.url}/readyz`);
  return { status: res.status, checks: ((await res.json()) as { checks: Check[] }).checks };
}

async function start(env: Record<string, string>): Promise<RunningBridge> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-adapters-'));
  const config = loadConfig({
    env: { PHASEBRIDGE_HOME: path.join(dir, 'home'), PHASEBRIDGE_PORT: '0', ...env },
    cwd: dir,
  });
  const bridge = await startBridge(config, createLogger({ level: 'silent' }), { worker: false });
  cleanups.push(async () => {
    await bridge.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return bridge;
}

/** Logs in with the one-time link; returns the Set-Cookie header. */
async function login(bridge: RunningBridge): Promise<string> {
  const res = await signIn(bridge.loginUrl);
  expect(res.status).toBe(303);
  return res.headers.get('set-cookie') ?? '';
}

describe('an adapter whose platform is unreachable at start', () => {
  it('retries in the background while the console and the other adapters serve', async () => {
    const port = await freePort();
    const discord = await FakeDiscord.start();
    cleanups.push(() => discord.close());
    const bridge = await start({
      TELEGRAM_BOT_TOKEN: TELEGRAM_TOKEN,
      TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.state.applicationId,
      DISCORD_API_URL: discord.apiUrl,
    });

    const before = await readyz(bridge);
    expect(before.status).toBe(503);
    const telegram = before.checks.find((c) => c.name === 'telegram');
    expect(telegram).toMatchObject({ ok: false, error: 'not ready' });
    expect(telegram?.detail).toMatch(
      /^telegram could not start \(\d+ attempt\(s\), (next attempt in \d+ s|attempt in progress for \d+ s)\): telegram: /,
    );
    expect(telegram?.detail).not.toContain(TELEGRAM_TOKEN);
    for (const name of ['bridge.db', 'queue', 'web', 'discord']) {
      expect(before.checks.find((c) => c.name === name)).toEqual({ name, ok: true });
    }

    // The console serves meanwhile: login, then the chat page; loopback cookies are not Secure.
    const cookie = await login(bridge);
    expect(cookie).not.toMatch(/;\s*Secure/i);
    const page = await fetch(bridge.url, {
      headers: { cookie: cookie.split(';')[0]!, accept: 'text/html' },
    });
    expect(page.status).toBe(200);
    // The console says which chats serve, and why one does not yet.
    const chatsLine = (html: string) => /<p class="muted" id="chats">([^<]*)<\/p>/.exec(html)?.[1];
    expect(chatsLine(await page.text())).toMatch(/telegram \(not up: telegram could not start/);

    // The platform comes up: the next attempt starts the adapter, and the bridge is ready.
    const fake = await FakeTelegram.start({ port, token: TELEGRAM_TOKEN });
    cleanups.push(() => fake.close());
    const after = await until('/readyz 200', async () => {
      const r = await readyz(bridge);
      return r.status === 200 ? r : undefined;
    });
    expect(after.checks.every((c) => c.ok)).toBe(true);
    expect(fake.calls.some((c) => c.method === 'getMe')).toBe(true);
    const later = await fetch(bridge.url, {
      headers: { cookie: cookie.split(';')[0]!, accept: 'text/html' },
    });
    expect(chatsLine(await later.text())).toContain('telegram (up)');
  });

  it('bound beyond loopback without https, the console refuses plain http and says how', async () => {
    // Secure cookies behind https are checked in test/bridges/web/https-only.test.ts.
    const bridge = await start({ PHASEBRIDGE_HOST: '0.0.0.0' });
    const res = await fetch(bridge.url, { headers: { accept: 'text/html' } });
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/https/);
  });
});

describe('retryDelay', () => {
  it('starts at 1 s, doubles up to 60 s, with ±20 % jitter', () => {
    const mid = () => 0.5;
    expect([1, 2, 3, 4, 5, 6, 7, 12].map((n) => retryDelay(n, ADAPTER_RETRY, mid))).toEqual([
      1000, 2000, 4000, 8000, 16_000, 32_000, 60_000, 60_000,
    ]);
    expect(retryDelay(1, ADAPTER_RETRY, () => 0)).toBe(800);
    expect(retryDelay(1, ADAPTER_RETRY, () => 1)).toBe(1200);
    expect(retryDelay(20, ADAPTER_RETRY, () => 0)).toBe(48_000);
    expect(retryDelay(20, ADAPTER_RETRY, () => 1)).toBe(60_000);
  });
});
