import { chmodSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../migrations/index.ts';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { tempDir } from './helpers.ts';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('openBridgeDb', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const newDir = () => {
    const d = tempDir();
    dirs.push(d);
    return d;
  };

  it('creates the folder 0700 and the file 0600, with WAL, foreign keys and a busy timeout', async () => {
    const home = join(newDir(), 'a', 'home');
    const file = join(home, 'bridge.db');
    const db = openBridgeDb({ file });
    try {
      await migrateToLatest(db);
      expect(mode(home)).toBe(0o700);
      expect(mode(file)).toBe(0o600);
      expect(db.sqlite.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.sqlite.pragma('foreign_keys', { simple: true })).toBe(1);
      expect(db.sqlite.pragma('busy_timeout', { simple: true })).toBe(5000);
      // The write-ahead log holds the same secrets as the file: SQLite gives it the file's mode.
      expect(existsSync(`${file}-wal`)).toBe(true);
      expect(mode(`${file}-wal`)).toBe(0o600);
      expect(db.file).toBe(file);
    } finally {
      await db.close();
    }
  });

  it('tightens an existing database file readable by others', async () => {
    const home = join(newDir(), 'home');
    mkdirSync(home);
    const file = join(home, 'bridge.db');
    writeFileSync(file, '');
    chmodSync(file, 0o644);
    const db = openBridgeDb({ file });
    await db.close();
    expect(mode(file)).toBe(0o600);
  });

  it('keeps data across close and reopen; a second close does nothing', async () => {
    const file = join(newDir(), 'bridge.db');
    const first = openBridgeDb({ file });
    await migrateToLatest(first);
    await first.kysely
      .insertInto('channels')
      .values({ id: 'telegram', platform: 'telegram', created_at: 1 })
      .execute();
    await first.close();
    await first.close();
    const second = openBridgeDb({ file });
    try {
      const rows = await second.kysely.selectFrom('channels').select('id').execute();
      expect(rows).toEqual([{ id: 'telegram' }]);
    } finally {
      await second.close();
    }
  });

  it('closes the raw handle even when kysely was never used', async () => {
    const db = openBridgeDb({ file: join(newDir(), 'bridge.db') });
    db.sqlite.prepare('select 1').get();
    await db.close();
    expect(db.sqlite.open).toBe(false);
  });

  it('opens a private in-memory database for ":memory:"', async () => {
    const db = openBridgeDb({ file: ':memory:' });
    try {
      expect((await migrateToLatest(db)).applied).toEqual(Object.keys(MIGRATIONS));
    } finally {
      await db.close();
    }
  });
});
