/**
 * The fast path of a plain `phasebridge status` / `runs` (dist/fast-status.cjs, which the bin
 * tries first): byte for byte what the full command (the main bundle, `node dist/main.js`) prints
 * for the same bridge.db, and whenever the full command would do anything else (migrate, refuse,
 * take an option, create or tighten a file) it steps aside and the bin gives the full answer.
 */
import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.ts';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { RunsRepo } from '../../src/db/repositories/runs.ts';
import type { RunIndexStatus } from '../../src/db/schema.ts';
import { slow } from '../support/slowdown.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin', 'phasebridge.js');
/** The full command: dist/main.js runs the main bundle, never the fast one. */
const MAIN = path.join(ROOT, 'dist', 'main.js');
const FAST = path.join(ROOT, 'dist', 'fast-status.cjs');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-status-fast-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface Result {
  code: number | null;
  out: string;
  err: string;
}

const baseEnv = (home: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH,
  PHASEBRIDGE_HOME: home,
  LOG_LEVEL: 'silent',
  ...extra,
});

function node(args: string[], home: string, extra?: Record<string, string>): Result {
  const res: SpawnSyncReturns<string> = spawnSync(process.execPath, args, {
    cwd: dir,
    env: baseEnv(home, extra),
    encoding: 'utf8',
    timeout: slow(30_000),
  });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

/** `phasebridge …args` as a person runs it: the bin (fast path first). */
const viaBin = (args: string[], home: string, extra?: Record<string, string>) =>
  node([BIN, ...args], home, extra);
/** The full command alone. */
const full = (args: string[], home: string, extra?: Record<string, string>) =>
  node([MAIN, ...args], home, extra);
/** The fast path alone: exit 0 when it answered, 3 when it stepped aside. */
const fastOnly = (args: string[], home: string, extra?: Record<string, string>) =>
  node(
    [
      '-e',
      `process.exitCode = require(${JSON.stringify(FAST)}).runFastStatus(${JSON.stringify([
        'node',
        'phasebridge',
        ...args,
      ])}) ? 0 : 3`,
    ],
    home,
    extra,
  );

const STATUSES: readonly RunIndexStatus[] = [
  'active',
  'awaiting',
  'blocked',
  'completed',
  'failed',
  'cancelled',
];

/** A home whose bridge.db the real migrator made, indexing `count` runs in every status. */
async function homeWithRuns(name: string, count: number): Promise<string> {
  const home = path.join(dir, name);
  fs.mkdirSync(home, { mode: 0o700 });
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  try {
    await migrateToLatest(db);
    const runs = new RunsRepo(db.kysely);
    const base = Date.parse('2026-12-01T10:00:00Z');
    for (let i = 0; i < count; i++) {
      await runs.upsert({
        id: `2026-12-01T10${String(i).padStart(2, '0')}00Z-run-${i}`,
        workflowId: i % 3 === 0 ? 'demo' : 'feature-with-a-long-name',
        workspace: path.join(dir, i % 2 === 0 ? 'ws-a' : 'workspace-b'),
        layout: i % 4 === 0 ? 'codemachine' : 'native',
        status: STATUSES[i % STATUSES.length]!,
        startedBy: i % 5 === 0 ? 'telegram:42' : null,
        createdAt: base + i * 60_000,
        // Pairs share an update time: the order then falls to the id, as in the full query.
        updatedAt: base + Math.floor(i / 2) * 90_000,
        spec: `spec ${i}`,
      });
    }
  } finally {
    await db.close();
  }
  return home;
}

beforeAll(() => {
  // Builds dist/ when stale (both bundles), as any call of the bin does.
  const built = node([BIN, '--version'], path.join(dir, 'unused-home'));
  expect(built.code, built.err).toBe(0);
  expect(fs.existsSync(FAST)).toBe(true);
}, slow(180_000));

describe('the fast `status` and `runs`', () => {
  it('prints exactly the full command’s runs table, newest 20 of 25 runs in every status', async () => {
    const home = await homeWithRuns('many', 25);
    for (const command of ['status', 'runs']) {
      const expected = full([command], home);
      expect(expected.code, expected.err).toBe(0);
      expect(expected.out.split('\n')).toHaveLength(22); // header, 20 runs, final newline
      const fast = fastOnly([command], home);
      expect(fast.code, `the fast path answered \`${command}\`: ${fast.err}`).toBe(0);
      expect(fast.out).toBe(expected.out);
      expect(fast.err).toBe('');
      const bin = viaBin([command], home);
      expect(bin).toEqual(expected);
    }
  });

  it('knows the migrations this build applies: those migrations/index.ts registers', async () => {
    const paths = (await import(path.join(ROOT, 'scripts', 'fast-paths.mjs'))) as {
      migrationNames(root: string): string[];
    };
    expect(paths.migrationNames(ROOT)).toEqual(Object.keys(MIGRATIONS).sort());
  });

  it('prints the hint for an empty index and a table of one run, as the full command', async () => {
    for (const [name, count] of [
      ['empty', 0],
      ['one', 1],
    ] as const) {
      const home = await homeWithRuns(name, count);
      const expected = full(['status'], home);
      expect(expected.code, expected.err).toBe(0);
      const fast = fastOnly(['status'], home);
      expect(fast.code, fast.err).toBe(0);
      expect(fast.out).toBe(expected.out);
    }
  });
});

describe('when the full command would answer otherwise, the fast path steps aside', () => {
  it('a database with a migration from a newer phasebridge: refused, as the full command does', async () => {
    const home = await homeWithRuns('newer', 3);
    const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
    db.sqlite
      .prepare('insert into kysely_migration (name, timestamp) values (?, ?)')
      .run('9999_from_the_future', new Date().toISOString());
    await db.close();
    expect(fastOnly(['status'], home)).toEqual({ code: 3, out: '', err: '' });
    const expected = full(['status'], home);
    expect(expected.code).toBe(1);
    expect(expected.err).toContain('9999_from_the_future unknown to this version');
    expect(viaBin(['status'], home)).toEqual(expected);
  });

  it('options and arguments it does not take go to the full command', async () => {
    const home = await homeWithRuns('options', 4);
    for (const args of [
      ['status', '--limit', '2'],
      ['runs', '--json'],
      ['status', '--bogus'],
      ['runs', 'extra'],
      ['status', '2026-12-01T100000Z-run-0'],
    ]) {
      expect(fastOnly(args, home), args.join(' ')).toEqual({ code: 3, out: '', err: '' });
      expect(viaBin(args, home), args.join(' ')).toEqual(full(args, home));
    }
    const limited = viaBin(['status', '--limit', '2'], home);
    expect(limited.out.trim().split('\n')).toHaveLength(3);
    expect(viaBin(['status', '--bogus'], home).code).toBe(2);
  });

  it('settings from the environment or a config file go to the full command', async () => {
    const home = await homeWithRuns('settings', 2);
    const refused = viaBin(['status'], home, { DATABASE_URL: 'postgres://u@127.0.0.1:1/db' });
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('DATABASE_URL=postgres is not yet supported by this command');
    const badLevel = viaBin(['status'], home, { LOG_LEVEL: 'loud' });
    expect(badLevel.code).toBe(1);
    expect(badLevel.err).toContain('invalid configuration');
    expect(fastOnly(['status'], home, { PHASEBRIDGE_PORT: 'x' }).code).toBe(3);
    const config = path.join(dir, 'phasebridge.config.yaml');
    fs.writeFileSync(config, 'port: 1\n');
    try {
      expect(fastOnly(['status'], home).code).toBe(3);
      expect(viaBin(['status'], home)).toEqual(full(['status'], home));
    } finally {
      fs.rmSync(config);
    }
    // A valid LOG_LEVEL and PHASEBRIDGE_WORKSPACE change nothing `status` prints: answered.
    const plain = fastOnly(['status'], home, { LOG_LEVEL: 'debug', PHASEBRIDGE_WORKSPACE: dir });
    expect(plain.code).toBe(0);
    expect(plain.out).toBe(full(['status'], home).out);
  });

  it('a missing bridge.db or home is created by the full command', () => {
    const home = path.join(dir, 'fresh', 'home');
    expect(fastOnly(['status'], home)).toEqual({ code: 3, out: '', err: '' });
    const res = viaBin(['status'], home);
    expect(res.code, res.err).toBe(0);
    expect(res.out).toMatch(/^no runs yet/);
    expect(fs.statSync(path.join(home, 'bridge.db')).mode & 0o777).toBe(0o600);
    // Made by the full command: the next call is answered by the fast path, the same way.
    const fast = fastOnly(['status'], home);
    expect(fast.code).toBe(0);
    expect(fast.out).toBe(res.out);
  });

  it('a home open to other users is tightened by the full command', async () => {
    const home = await homeWithRuns('loose', 2);
    fs.chmodSync(home, 0o755);
    expect(fastOnly(['runs'], home).code).toBe(3);
    const res = viaBin(['runs'], home, { LOG_LEVEL: 'warn' });
    expect(res.code).toBe(0);
    expect(res.err).toContain('PHASEBRIDGE_HOME was 0755 (open to other users)');
    expect(fs.statSync(home).mode & 0o777).toBe(0o700);
  });

  it('a database with a pending migration is migrated by the full command', async () => {
    const home = await homeWithRuns('pending', 2);
    const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
    // As a bridge.db from before the newest migration: undone, and its record gone.
    const newest = Object.keys(MIGRATIONS).sort().at(-1)!;
    await MIGRATIONS[newest]!.down!(db.kysely as Kysely<unknown>);
    db.sqlite.prepare('delete from kysely_migration where name = ?').run(newest);
    await db.close();
    expect(fastOnly(['status'], home).code).toBe(3);
    const res = viaBin(['status'], home);
    expect(res.code, res.err).toBe(0);
    expect(fastOnly(['status'], home)).toEqual({ code: 0, out: res.out, err: '' });
  });
});
