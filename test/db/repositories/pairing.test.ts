import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hashPairingCode } from '../../../src/db/repositories/pairing.ts';
import { ConflictError } from '../../../src/errors.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('PairingRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('a code works once, then says it was used', async () => {
    const hash = hashPairingCode('ABCD-1234');
    await t.repos.pairing.create(hash, 5_000);
    expect(await t.repos.pairing.consume(hash, 4_999)).toBe('ok');
    expect(await t.repos.pairing.consume(hash, 4_999)).toBe('used');
  });

  it('of two simultaneous consumers exactly one succeeds', async () => {
    const hash = hashPairingCode('race');
    await t.repos.pairing.create(hash, 5_000);
    const results = await Promise.all([
      t.repos.pairing.consume(hash, 1_000),
      t.repos.pairing.consume(hash, 1_000),
    ]);
    expect(results.sort()).toEqual(['ok', 'used']);
  });

  it('an expired code is refused and an unknown one is reported as unknown', async () => {
    const hash = hashPairingCode('old');
    await t.repos.pairing.create(hash, 5_000);
    expect(await t.repos.pairing.consume(hash, 5_000)).toBe('expired');
    expect(await t.repos.pairing.consume(hashPairingCode('never'), 1)).toBe('unknown');
  });

  it('stores only the hash, matching a code typed with other case or spaces', async () => {
    await t.repos.pairing.create(hashPairingCode('AbC123'), 5_000);
    const stored = await t.db.kysely.selectFrom('pairing_codes').selectAll().execute();
    expect(JSON.stringify(stored)).not.toContain('AbC123');
    expect(await t.repos.pairing.consume(hashPairingCode(' abc123 '), 1)).toBe('ok');
  });

  it('refuses a duplicate code and purges expired ones', async () => {
    await t.repos.pairing.create('h1', 5_000);
    await expect(t.repos.pairing.create('h1', 9_000)).rejects.toBeInstanceOf(ConflictError);
    await t.repos.pairing.create('h2', 9_000);
    expect(await t.repos.pairing.deleteExpired(6_000)).toBe(1);
    expect(await t.repos.pairing.consume('h1', 1)).toBe('unknown');
    expect(await t.repos.pairing.consume('h2', 6_000)).toBe('ok');
  });
});
