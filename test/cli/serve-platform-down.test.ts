/**
 * `phasebridge serve` with a chat platform down: one log line per state change of that platform
 * ("Telegram unreachable, retrying in 1 s …", then "Telegram is up again …"), not a stack trace
 * per retry; the stacks are at debug. Real CLI process, Telegram's fake started late on the port
 * the bridge keeps trying.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTelegram } from '../fakes/telegram.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const TOKEN = '123456:TEST-token_abc';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + 40_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

interface Line {
  level: number;
  msg: string;
  platform?: string;
  err?: { stack?: string };
}

describe('phasebridge serve with Telegram down', () => {
  it('logs one line per state change, the stacks only at debug', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-down-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    let err = '';
    const child: ChildProcess = spawn(process.execPath, [BIN, 'serve', '--concurrency', '0'], {
      env: {
        PATH: process.env.PATH,
        PHASEBRIDGE_HOME: path.join(dir, 'home'),
        PHASEBRIDGE_PORT: '0',
        TELEGRAM_BOT_TOKEN: TOKEN,
        TELEGRAM_API_ROOT: `http://127.0.0.1:${port}`,
        LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    cleanups.push(async () => {
      if (child.exitCode === null) child.kill('SIGKILL');
      await exited;
    });
    const lines = (): Line[] =>
      err
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Line);
    const base = await until(
      'the listening address',
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"http: listening"/.exec(err)?.[1],
    );
    // Three failed attempts (1 s, then 2 s apart), /readyz polled meanwhile.
    await until('three failed attempts', async () => {
      expect((await fetch(`${base}/readyz`)).status).toBe(503);
      const n = lines().filter((l) => l.msg === 'adapter start attempt failed').length;
      return n >= 3 ? true : undefined;
    });
    const warned = lines().filter((l) => l.level >= 40);
    expect(warned.map((l) => l.msg)).toEqual([
      expect.stringMatching(
        /^Telegram unreachable, retrying in 1 s \(network error: .*\); the console and the other adapters keep serving$/,
      ),
      'readiness probe failed',
    ]);
    expect(warned.some((l) => l.err !== undefined)).toBe(false);
    const attempts = lines().filter((l) => l.msg === 'adapter start attempt failed');
    expect(attempts.length).toBeGreaterThanOrEqual(3);
    expect(attempts.every((l) => l.level === 20 && l.err?.stack?.includes('PlatformError'))).toBe(
      true,
    );

    // Telegram answers again: one line says so.
    const fake = await FakeTelegram.start({ port, token: TOKEN });
    cleanups.push(() => fake.close());
    await until('Telegram up again', () =>
      lines().find((l) => l.msg.startsWith('Telegram is up again')),
    );
    expect(lines().filter((l) => l.level >= 40)).toHaveLength(2);
    expect(err).not.toContain(TOKEN);
  }, 60_000);
});
