import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mapSqliteError, sqliteCode } from '../../src/db/sqlite-errors.ts';
import { ConflictError, describeError, InvalidInputError } from '../../src/errors.ts';
import { openTestDb, type TestDb } from './helpers.ts';

describe('mapSqliteError', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb();
  });
  afterEach(() => t.cleanup());

  /** Runs a raw statement and returns what it threw. */
  function failure(sqlText: string, ...params: unknown[]): unknown {
    try {
      t.db.sqlite.prepare(sqlText).run(...params);
    } catch (err) {
      return err;
    }
    throw new Error(`expected "${sqlText}" to fail`);
  }

  it('turns a unique violation into a readable ConflictError that chat may show', () => {
    const insert =
      "insert into agents (name, engine, created_at, updated_at) values ('x', 'claude', 1, 1)";
    t.db.sqlite.prepare(insert).run();
    const raw = failure(insert);
    expect(sqliteCode(raw)).toBe('SQLITE_CONSTRAINT_UNIQUE');

    const err = mapSqliteError(raw, "an agent named 'x'");
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).code).toBe('CONFLICT');
    expect((err as Error).message).toBe("an agent named 'x' already exists");
    expect((err as Error).cause).toBe(raw);
    expect(describeError(err).chatReply).toBe("an agent named 'x' already exists");
  });

  it('turns a foreign-key violation into a ConflictError, with the message the caller gives', () => {
    const raw = failure(
      "insert into allowlist (binding_id, platform, user_id, role, created_at) values (99, 'telegram', '42', 'admin', 1)",
    );
    expect(sqliteCode(raw)).toBe('SQLITE_CONSTRAINT_FOREIGNKEY');
    const generic = mapSqliteError(raw, 'a role for telegram user 42');
    expect(generic).toBeInstanceOf(ConflictError);
    expect((generic as Error).message).not.toMatch(/FOREIGN KEY/);
    const specific = mapSqliteError(raw, 'a role', { foreignKey: 'binding 99 does not exist' });
    expect((specific as Error).message).toBe('binding 99 does not exist');
  });

  it('turns CHECK and type violations into InvalidInputError', () => {
    const check = failure(
      "insert into allowlist (platform, user_id, role, created_at) values ('telegram', '42', 'root', 1)",
    );
    const mapped = mapSqliteError(check, "a role for telegram user '42'");
    expect(mapped).toBeInstanceOf(InvalidInputError);
    expect((mapped as Error).message).toMatch(
      /^a role for telegram user '42' has an invalid value \(role in/,
    );

    // STRICT tables refuse an ISO string where ms are expected instead of storing it.
    const type = failure(
      "insert into audit (at, actor, action, outcome) values ('2026-01-01T00:00:00Z', 'cli:a', 'x', 'allowed')",
    );
    expect(mapSqliteError(type, 'an audit entry')).toBeInstanceOf(InvalidInputError);
  });

  it('returns anything else unchanged', () => {
    const syntax = failure('insert into nowhere values (1)');
    expect(mapSqliteError(syntax, 'x')).toBe(syntax);
    const plain = new Error('boom');
    expect(mapSqliteError(plain, 'x')).toBe(plain);
    expect(mapSqliteError('text', 'x')).toBe('text');
  });
});
