/**
 * `serve` with DATABASE_URL=postgres://… but no REDIS_URL refuses at start with one line (the
 * embedded job queue is SQLite's), and the CLI commands that open bridge.db themselves refuse
 * DATABASE_URL, each before it opens or creates anything: bridge.db is never split between
 * SQLite and Postgres. (serve-postgres-story.test.ts runs serve on Postgres with Redis.)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridge } from '../../src/app/bridge.ts';
import { CliContext } from '../../src/cli/context.ts';
import { loadConfig } from '../../src/config.ts';
import { hasCode } from '../../src/errors.ts';
import { createLogger } from '../../src/log.ts';

const URL_WITH_PASSWORD = 'postgres://bridge:pw-9f3c1d@127.0.0.1:1/phasebridge';
const LINE =
  /^DATABASE_URL=postgres needs REDIS_URL for serve: the embedded job queue lives in SQLite, so on Postgres jobs go through BullMQ on Redis, see docs\/operations\.md/;

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  delete process.env.DATABASE_URL;
  delete process.env.PHASEBRIDGE_HOME;
});

function home(): { dir: string; home: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-serve-pg-'));
  dirs.push(dir);
  return { dir, home: path.join(dir, 'home') };
}

describe('serve with a postgres DATABASE_URL', () => {
  it('without REDIS_URL refuses at start with one line, creating no bridge.db and never showing the password', async () => {
    const { dir, home: h } = home();
    const config = loadConfig({
      env: { PHASEBRIDGE_HOME: h, PHASEBRIDGE_PORT: '0', DATABASE_URL: URL_WITH_PASSWORD },
      cwd: dir,
    });
    const error = await startBridge(config, createLogger({ level: 'silent' })).catch(
      (err: unknown) => err,
    );
    expect(hasCode(error, 'CONFIG')).toBe(true);
    const message = (error as Error).message;
    expect(message).toMatch(LINE);
    expect(message.split('\n')).toHaveLength(1);
    expect(message).not.toContain('pw-9f3c1d');
    expect(fs.existsSync(path.join(h, 'bridge.db'))).toBe(false);
  });

  it('makes the commands that open bridge.db refuse the same way', async () => {
    const { home: h } = home();
    process.env.PHASEBRIDGE_HOME = h;
    process.env.DATABASE_URL = URL_WITH_PASSWORD;
    const error = await new CliContext().repos().catch((err: unknown) => err);
    expect(hasCode(error, 'CONFIG')).toBe(true);
    expect((error as Error).message).toMatch(
      /^DATABASE_URL=postgres is not yet supported by this command: /,
    );
    expect(fs.existsSync(h)).toBe(false);
  });
});
