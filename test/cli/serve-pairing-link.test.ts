/**
 * `phasebridge serve` prints Telegram's one-tap pairing link next to the pairing code: the bot's
 * username comes from getMe. Real CLI process against the local Telegram fake.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeTelegram } from '../fakes/telegram.ts';
import { slow } from '../support/slowdown.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('phasebridge serve with Telegram', () => {
  it('prints the t.me deep link that pairs with the printed code', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-serve-link-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const fake = await FakeTelegram.start({ botUsername: 'acme_pb_bot' });
    cleanups.push(() => fake.close());
    const child = spawn(process.execPath, [BIN, 'serve', '--concurrency', '0'], {
      cwd: dir,
      env: {
        PATH: process.env.PATH,
        PHASEBRIDGE_HOME: path.join(dir, 'home'),
        PHASEBRIDGE_PORT: '0',
        LOG_LEVEL: 'silent',
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.apiRoot,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    let out = '';
    const banner = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner in:\n${out}`)), slow(40_000));
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (out.includes('Ctrl+C stops')) {
          clearTimeout(timer);
          resolve(out);
        }
      });
    });
    const code = /send "pair ([A-Z0-9]+)"/.exec(banner)?.[1];
    expect(code).toMatch(/^[A-Z0-9]{10}$/);
    expect(banner).toContain(`One tap (telegram): https://t.me/acme_pb_bot?start=${code}`);
    // Which adapters are up, and what to do next on a fresh home.
    expect(banner).toContain('Chats:       telegram (up)');
    expect(banner).toContain('Next:        pair a chat with the code above (no chat is bound yet)');
  });
});
