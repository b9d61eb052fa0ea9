/**
 * The web console across restarts, through the real assembled bridge and real HTTP: a logged-in
 * browser stays logged in and sees the same chat, and `phasebridge login` (another process,
 * same PHASEBRIDGE_HOME) prints a link that opens the running console exactly once.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { signIn } from '../support/console-login.ts';
import { slow } from '../support/slowdown.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');

let dir: string;
let bridge: RunningBridge | undefined;

beforeEach(() => {
  process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-console-'));
});
afterEach(async () => {
  await bridge?.stop();
  bridge = undefined;
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * The settings `serve` and `login` share. Port 0 (the default) lets the bridge take a free port
 * as it listens: a port picked ahead and freed again can be taken by any other process (the
 * other test files, other users of the machine) before the bridge binds it.
 */
function env(port = 0): Record<string, string> {
  return {
    PHASEBRIDGE_HOME: path.join(dir, 'home'),
    PHASEBRIDGE_WORKSPACE: path.join(dir, 'ws'),
    PHASEBRIDGE_HOST: '127.0.0.1',
    PHASEBRIDGE_PORT: String(port),
    LOG_LEVEL: 'silent',
  };
}

async function serve(port = 0): Promise<RunningBridge> {
  const config = loadConfig({ env: env(port), cwd: dir });
  bridge = await startBridge(config, createLogger({ level: 'silent' }), { editIntervalMs: 5 });
  return bridge;
}

async function restart(): Promise<RunningBridge> {
  await bridge?.stop();
  bridge = undefined;
  return serve();
}

/** `phasebridge login` for a bridge on `port`, in a child process (this process serves the console). */
function login(port: number): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'login'], {
      cwd: dir,
      env: { PATH: process.env.PATH, ...env(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

/** Opens a login link as a browser does; the session cookie, or undefined when refused. */
async function open(link: string): Promise<string | undefined> {
  const res = await signIn(link);
  if (res.status !== 303) return undefined;
  return (res.headers.get('set-cookie') ?? '').split(';')[0];
}

/** The console page as the browser with this cookie sees it. */
async function page(cookie: string): Promise<{ status: number; csrf: string; html: string }> {
  const res = await fetch(`${bridge!.url}/`, { headers: { cookie } });
  const html = await res.text();
  return {
    status: res.status,
    csrf: /name="csrf-token" content="([^"]+)"/.exec(html)?.[1] ?? '',
    html,
  };
}

/** Refs of the run status messages the console page shows. */
function statusRefs(html: string): string[] {
  const articles = html.matchAll(
    /<article class="msg msg-bridge" data-ref="([^"]+)"[^>]*>([\s\S]*?)<\/article>/g,
  );
  return [...articles]
    .filter((a) => /<strong>Run \S+<\/strong> · Demo/.test(a[2]!))
    .map((a) => a[1]!);
}

async function say(cookie: string, csrf: string, text: string): Promise<number> {
  const res = await fetch(`${bridge!.url}/api/command`, {
    method: 'POST',
    headers: {
      cookie,
      'x-csrf-token': csrf,
      origin: bridge!.url,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({ text }),
  });
  return res.status;
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + slow(15_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('the console across restarts', () => {
  it('keeps a logged-in browser logged in, with the same chat and CSRF token', async () => {
    await serve();
    const cookie = (await open(bridge!.loginUrl))!;
    const before = await page(cookie);
    expect(await say(cookie, before.csrf, 'run demo add login')).toBe(200);
    const status = await until('the status message', async () =>
      statusRefs((await page(cookie)).html).at(0),
    );
    const usedLink = new URL(bridge!.loginUrl);

    await restart();
    const after = await page(cookie);
    expect(after.status).toBe(200);
    expect(after.csrf).toBe(before.csrf);
    expect(statusRefs(after.html)).toEqual([status]);
    expect(await say(cookie, after.csrf, 'runs')).toBe(200);
    // The link from before the restart was used up, and stays so (its token, on the bridge's
    // new port).
    expect(await open(`${bridge!.url}/${usedLink.search}`)).toBeUndefined();
  });

  it('`phasebridge login` prints a link the running bridge accepts once', async () => {
    await serve();
    const { code, out } = await login(Number(new URL(bridge!.url).port));
    expect(code).toBe(0);
    const link = /^http:\/\/127\.0\.0\.1:\d+\/\?token=[A-Za-z0-9_-]{43}$/m.exec(out)?.[0];
    expect(link).toBeDefined();
    expect(link!.startsWith(`${bridge!.url}/`)).toBe(true);
    expect(out).toContain('accepts it now');

    const cookie = await open(link!);
    expect(cookie).toMatch(/^pb_session=/);
    expect((await page(cookie!)).status).toBe(200);
    expect(await open(link!)).toBeUndefined();
  });

  it('`phasebridge login` before `serve` runs: the link works once the bridge is up', async () => {
    // The link names the port before the bridge runs: picked ahead here, so the one test where
    // another process could take it first.
    const port = await freePort();
    const { code, out } = await login(port);
    expect(code).toBe(0);
    expect(out).toContain('the link works once `phasebridge serve` runs');
    const link = /^http:\/\/\S+$/m.exec(out)![0];
    await serve(port);
    expect(await open(link)).toMatch(/^pb_session=/);
    expect(await open(link)).toBeUndefined();
  });
});

/** A TCP port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
