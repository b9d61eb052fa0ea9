import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.ts';
import {
  type BridgeDb,
  migrateToLatest,
  migrationStatus,
  openBridgeDb,
} from '../../src/db/connection.ts';
import { CorruptStateError } from '../../src/errors.ts';
import { bundled } from '../support/bundle.ts';
import { tempDir } from './helpers.ts';

/** Every migration of this build, in order. */
const ALL = Object.keys(MIGRATIONS);

const TABLES = [
  'agents',
  'allowlist',
  'audit',
  'bindings',
  'channel_state',
  'channels',
  'checkpoint_messages',
  'console_login_tokens',
  'console_sessions',
  'flow_run_cache',
  'followed_workspaces',
  'full_access_workspaces',
  'jobs',
  'leader_fence',
  'link_codes',
  'outbox',
  'pairing_codes',
  'people',
  'person_links',
  'persons',
  'reason_prompts',
  'run_changes',
  'run_feed',
  'run_messages',
  'runs',
  'session_offers',
  'status_messages',
  'tool_approvals',
  'unreachable_chats',
];

function tables(db: BridgeDb): string[] {
  const rows = db.sqlite
    .prepare(
      "select name from sqlite_master where type = 'table' and name not like 'kysely_%' and name not like 'sqlite_%' order by name",
    )
    .all() as { name: string }[];
  return rows.map((r) => r.name);
}

describe('migrateToLatest', () => {
  const open: BridgeDb[] = [];
  const dirs: string[] = [];
  const fresh = () => {
    const dir = tempDir();
    dirs.push(dir);
    const db = openBridgeDb({ file: join(dir, 'bridge.db') });
    open.push(db);
    return db;
  };
  afterEach(async () => {
    for (const db of open.splice(0)) await db.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('creates every table on a fresh file, and a second run applies nothing', async () => {
    const db = fresh();
    expect(await migrateToLatest(db)).toEqual({ applied: ALL });
    expect(tables(db)).toEqual(TABLES);
    expect(await migrateToLatest(db)).toEqual({ applied: [] });

    const reopened = openBridgeDb({ file: db.file });
    open.push(reopened);
    expect(await migrateToLatest(reopened)).toEqual({ applied: [] });
  });

  it('applies 0009_retention to an existing bridge.db with its rows kept', async () => {
    const db = fresh();
    const before = Object.fromEntries(
      Object.entries(MIGRATIONS).filter(([name]) => name < '0009_retention'),
    );
    await migrateToLatest(db, { migrations: before });
    db.sqlite
      .prepare(
        `insert into runs (id, workflow_id, workspace, layout, status, created_at, updated_at, finished_at)
         values ('2026-01-01T000000Z-a', 'demo', '/ws', 'native', 'completed', 1, 2, 2)`,
      )
      .run();
    db.sqlite
      .prepare(
        `insert into jobs (id, run_id, step_id, attempt, state, payload_json, available_at, created_at, finished_at)
         values ('2026-01-01T000000Z-a:plan:1', '2026-01-01T000000Z-a', 'plan', 1, 'completed', '{}', 1, 1, 2)`,
      )
      .run();
    expect(await migrateToLatest(db)).toEqual({
      applied: Object.keys(MIGRATIONS).filter((name) => name >= '0009_retention'),
    });
    expect(
      db.sqlite.prepare('select id, status, finished_at, archived_at from runs').all(),
    ).toEqual([
      { id: '2026-01-01T000000Z-a', status: 'completed', finished_at: 2, archived_at: null },
    ]);
    expect(db.sqlite.prepare('select count(*) as n from jobs').get()).toEqual({ n: 1 });
    const indexes = (
      db.sqlite.prepare("select name from sqlite_master where type = 'index'").all() as {
        name: string;
      }[]
    ).map((r) => r.name);
    expect(indexes).toEqual(
      expect.arrayContaining(['runs_workspace_idx', 'runs_finished_idx', 'jobs_finished_idx']),
    );
  });

  it('applies 0040_interactive_urgency to a bridge.db with outbox rows: rows, ids and indexes kept', async () => {
    const db = fresh();
    const before = Object.fromEntries(
      Object.entries(MIGRATIONS).filter(([name]) => name < '0040_interactive_urgency'),
    );
    await migrateToLatest(db, { migrations: before });
    const insert = (urgency: string, key: string | null) =>
      db.sqlite
        .prepare(
          `insert into outbox (platform, lane, kind, target, payload_json, urgency, state, created_at, updated_at, dedupe_key)
           values ('telegram', 'telegram:5', 'send', 'telegram:5', '{}', ?, 'pending', 1, 1, ?)`,
        )
        .run(urgency, key);
    insert('decision', 'answer:r:s:1');
    insert('status', null);
    // Not allowed before 0040.
    expect(() => insert('interactive', null)).toThrow(/CHECK constraint/);
    await migrateToLatest(db);
    expect(
      db.sqlite.prepare('select id, urgency, dedupe_key from outbox order by id').all(),
    ).toEqual([
      { id: 1, urgency: 'decision', dedupe_key: 'answer:r:s:1' },
      { id: 2, urgency: 'status', dedupe_key: null },
    ]);
    // Allowed now; ids go on after the kept ones; the keyed-send index still refuses a twin.
    expect(Number(insert('interactive', null).lastInsertRowid)).toBe(3);
    expect(() => insert('notice', 'answer:r:s:1')).toThrow(/UNIQUE constraint/);
    expect(() => insert('urgent', null)).toThrow(/CHECK constraint/);
    const indexes = (
      db.sqlite
        .prepare("select name from sqlite_master where type = 'index' and tbl_name = 'outbox'")
        .all() as { name: string }[]
    ).map((r) => r.name);
    expect(indexes).toEqual(expect.arrayContaining(['outbox_open', 'outbox_dedupe']));
  });

  it('reports status without touching a fresh database', async () => {
    const db = fresh();
    expect(await migrationStatus(db)).toEqual(ALL.map((name) => ({ name })));
    expect(db.sqlite.prepare("select name from sqlite_master where type = 'table'").all()).toEqual(
      [],
    );
    await migrateToLatest(db);
    const states = await migrationStatus(db);
    expect(states.map((s) => s.name)).toEqual(ALL);
    for (const s of states) expect(Number.isNaN(Date.parse(s.appliedAt ?? ''))).toBe(false);
  });

  it('refuses a database written by a newer phasebridge, with a message saying what to do', async () => {
    const db = fresh();
    await migrateToLatest(db);
    db.sqlite
      .prepare('insert into kysely_migration (name, timestamp) values (?, ?)')
      .run('0007_future_thing', new Date().toISOString());

    const err = await migrateToLatest(db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptStateError);
    expect((err as CorruptStateError).code).toBe('CORRUPT_STATE');
    expect((err as Error).message).toBe(
      `bridge.db at ${db.file} was written by a newer phasebridge (migration 0007_future_thing ` +
        'unknown to this version); upgrade phasebridge or point PHASEBRIDGE_HOME elsewhere',
    );
    expect(db.sqlite.inTransaction).toBe(false);
    const status = await migrationStatus(db);
    expect(status.at(-1)).toMatchObject({ name: '0007_future_thing', unknown: true });
  });

  it('applies nothing when one pending migration fails', async () => {
    const db = fresh();
    const broken = {
      ...MIGRATIONS,
      '9999_broken': {
        async up(k: Kysely<unknown>) {
          await k.schema.createTable('half_done').addColumn('x', 'integer').execute();
          await sql`select * from no_such_table`.execute(k);
        },
      },
    };
    const err = await migrateToLatest(db, { migrations: broken }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptStateError);
    expect((err as Error).message).toContain('migration 9999_broken failed');
    expect((err as Error).message).toContain('no such table');
    // The others ran in the same transaction: rolled back too, so a retry starts clean.
    expect(tables(db)).toEqual([]);
    expect(await migrationStatus(db)).toEqual(ALL.map((name) => ({ name })));
    expect(await migrateToLatest(db)).toEqual({ applied: ALL });
  });

  it('sees an up-to-date database with one read: no wait for another process writing', async () => {
    const db = fresh();
    await migrateToLatest(db);
    const writer = openBridgeDb({ file: db.file });
    open.push(writer);
    writer.sqlite.exec('BEGIN IMMEDIATE');
    try {
      // Taking the write lock would wait out the busy timeout (5 s), then fail with SQLITE_BUSY.
      expect(await migrateToLatest(db)).toEqual({ applied: [] });
      expect(db.sqlite.inTransaction).toBe(false);
    } finally {
      writer.sqlite.exec('ROLLBACK');
    }
  });

  it('leaves migrations applied out of order to the migrator and its error', async () => {
    const db = fresh();
    await migrateToLatest(db);
    // The last one recorded as applied first: every name known, but not in kysely's order.
    db.sqlite
      .prepare('update kysely_migration set timestamp = ? where name = ?')
      .run('2000-01-01T00:00:00.000Z', ALL.at(-1));
    const err = await migrateToLatest(db).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CorruptStateError);
    expect((err as Error).message).toContain('cannot migrate: corrupted migrations');
    expect(db.sqlite.inTransaction).toBe(false);
  });

  it('lets two processes starting together take turns: one migrates, the other finds it done', async () => {
    const file = join(tempDir(), 'bridge.db');
    dirs.push(join(file, '..'));
    // Bundled once (test/support/bundle.ts): under tsx each start compiled the migrator again.
    const child = bundled(join(import.meta.dirname, 'fixtures', 'migrate-child.ts'));
    const run = () =>
      promisify(execFile)(process.execPath, [child, file], {
        cwd: join(import.meta.dirname, '..', '..'),
      });
    const outputs = await Promise.all([run(), run()]);
    const applied = outputs.map((o) => (JSON.parse(o.stdout) as { applied: string[] }).applied);
    expect(applied.map((a) => a.length).sort()).toEqual([0, ALL.length + 1]);
    expect(applied.flat()).toEqual([...ALL, '9999_slow']);
  });
});

describe('the migration registry', () => {
  // Numbers are handed out per issue ahead of time, so one may be missing until its work lands.
  it('names every migration NNNN_what, numbered in increasing order, each number once', () => {
    const names = Object.keys(MIGRATIONS);
    expect(names).toEqual([...names].sort());
    const numbers = names.map((name) => {
      expect(name).toMatch(/^\d{4}_[a-z0-9_]+$/);
      return Number(name.slice(0, 4));
    });
    expect(numbers[0]).toBe(1);
    for (const [i, n] of numbers.slice(1).entries()) expect(n).toBeGreaterThan(numbers[i]!);
  });
});
