/**
 * `phasebridge serve` as an operator exposes it: a loose home is tightened, the printed link uses
 * PHASEBRIDGE_PUBLIC_URL, cookies are Secure behind https, and at LOG_LEVEL=trace no piece of a
 * Discord token reaches the log (discord.js logs two of its three segments). Real CLI process,
 * real HTTP, the real Discord adapter against the local fake.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeDiscord } from '../fakes/discord.ts';
import { signIn } from '../support/console-login.ts';
import { slow } from '../support/slowdown.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
/** Discord-shaped: base64 user id, timestamp, HMAC; every segment long enough to be masked. */
const TOKEN = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhJkLmNo.Zx9-Qw8_Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc';
const PUBLIC_URL = 'https://pb.example.test/console/';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

interface Served {
  child: ChildProcess;
  out: () => string;
  err: () => string;
  exited: Promise<number | null>;
}

function serve(env: Record<string, string>): Served {
  let out = '';
  let err = '';
  const child = spawn(process.execPath, [BIN, 'serve', '--concurrency', '0'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  cleanups.push(async () => {
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, out: () => out, err: () => err, exited };
}

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + slow(40_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('phasebridge serve behind a public https URL', () => {
  it('tightens the home, prints public links, sets Secure cookies and masks token pieces', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-serve-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const home = path.join(dir, 'home');
    fs.mkdirSync(home, { mode: 0o755 });
    fs.chmodSync(home, 0o755);
    const discord = await FakeDiscord.start({ token: TOKEN });
    cleanups.push(() => discord.close());

    const s = serve({
      PHASEBRIDGE_HOME: home,
      PHASEBRIDGE_PORT: '0',
      PHASEBRIDGE_PUBLIC_URL: PUBLIC_URL,
      LOG_LEVEL: 'trace',
      DISCORD_BOT_TOKEN: TOKEN,
      DISCORD_APPLICATION_ID: discord.state.applicationId,
      DISCORD_API_URL: discord.apiUrl,
    });
    const link = await until(
      'the printed console link',
      () => /Web console: (\S+)/.exec(s.out())?.[1],
    );
    const base = await until(
      'the listening address',
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"http: listening"/.exec(s.err())?.[1],
    );

    // The link is the public one; the same path opens a Secure session on the real server.
    expect(link).toMatch(/^https:\/\/pb\.example\.test\/console\/\?token=[\w-]+$/);
    const res = await signIn(`${base}/${link.slice(PUBLIC_URL.length)}`);
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; Secure$/);

    // The home was tightened with a warning; bridge.db and its WAL files are private.
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
    expect(s.err()).toContain('PHASEBRIDGE_HOME was 0755 (open to other users): tightened to 0700');
    for (const f of ['bridge.db', 'bridge.db-wal', 'bridge.db-shm']) {
      expect(fs.statSync(path.join(home, f)).mode & 0o777).toBe(0o600);
    }

    // Discord started, having logged its "censored" token at debug.
    await until('/readyz 200', async () =>
      (await fetch(`${base}/readyz`)).status === 200 ? true : undefined,
    );
    expect(s.err()).toContain('Provided token: [REDACTED].[REDACTED].*****');

    s.child.kill('SIGTERM');
    expect(await s.exited).toBe(0);
    const everything = s.out() + s.err();
    for (const segment of TOKEN.split('.')) expect(everything).not.toContain(segment);
  });
});
