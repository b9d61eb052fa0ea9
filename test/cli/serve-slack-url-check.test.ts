/**
 * Slack HTTP mode in the order that works: Slack checks the manifest's request URL before the
 * app is installed (so before SLACK_BOT_TOKEN exists). `phasebridge serve` with only
 * SLACK_SIGNING_SECRET answers that signed challenge over real HTTP, refuses an unsigned one, and
 * processes nothing else. Real CLI process.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const SECRET = 'fake-signing-secret-1234';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function serve(env: Record<string, string>): { err: () => string; child: ChildProcess } {
  let err = '';
  const child = spawn(process.execPath, [BIN, 'serve', '--concurrency', '0'], {
    env: { PATH: process.env.PATH, ...env },
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
  return { err: () => err, child };
}

async function until<T>(what: string, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 40_000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function signed(body: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const sig = createHmac('sha256', SECRET).update(`v0:${ts}:${body}`).digest('hex');
  return { 'x-slack-request-timestamp': ts, 'x-slack-signature': `v0=${sig}` };
}

describe('phasebridge serve with only SLACK_SIGNING_SECRET', () => {
  it('answers the signed url_verification challenge before any token is set', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-slack-url-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const s = serve({
      PHASEBRIDGE_HOME: path.join(dir, 'home'),
      PHASEBRIDGE_PORT: '0',
      SLACK_SIGNING_SECRET: SECRET,
      LOG_LEVEL: 'info',
    });
    const base = await until(
      'the listening address',
      () => /"url":"(http:\/\/127\.0\.0\.1:\d+)","msg":"http: listening"/.exec(s.err())?.[1],
    );
    const json = { 'content-type': 'application/json' };
    const challenge = JSON.stringify({ token: 'x', challenge: 'c-42', type: 'url_verification' });
    const ok = await fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: { ...json, ...signed(challenge) },
      body: challenge,
    });
    expect(ok.status).toBe(200);
    expect(await ok.json()).toEqual({ challenge: 'c-42' });

    const unsigned = await fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: json,
      body: challenge,
    });
    expect(unsigned.status).toBe(401);

    // A signed command is not processed: there is no bot to answer it with.
    const command = 'command=%2Fpb&text=run+demo';
    const form = { 'content-type': 'application/x-www-form-urlencoded' };
    const refused = await fetch(`${base}/slack/events`, {
      method: 'POST',
      headers: { ...form, ...signed(command) },
      body: command,
    });
    expect(refused.status).toBe(503);
    expect(await refused.text()).toContain('SLACK_BOT_TOKEN is not set yet');
    expect(s.err()).toContain('slack: request URL verified');
  });
});
