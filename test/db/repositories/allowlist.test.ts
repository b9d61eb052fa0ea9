import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { strongerRole } from '../../../src/db/repositories/allowlist.ts';
import { ConflictError } from '../../../src/errors.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('AllowlistRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  let bindingId: number;
  let otherBindingId: number;
  beforeEach(async () => {
    t = await open();
    bindingId = (await t.repos.bindings.bind({ chatRef: 'telegram:1', workspace: '/a' })).id;
    otherBindingId = (await t.repos.bindings.bind({ chatRef: 'telegram:2', workspace: '/b' })).id;
  });
  afterEach(() => t.cleanup());

  it('denies by default', async () => {
    expect(await t.repos.allowlist.roleOf('telegram', '42', bindingId)).toBeNull();
    expect(await t.repos.allowlist.roleOf('telegram', '42')).toBeNull();
  });

  it('gives the stronger of the global role and the role in the binding', async () => {
    await t.repos.allowlist.allow('global', 'telegram', '42', 'viewer');
    await t.repos.allowlist.allow({ bindingId }, 'telegram', '42', 'approver');

    expect(await t.repos.allowlist.roleOf('telegram', '42', bindingId)).toBe('approver');
    expect(await t.repos.allowlist.roleOf('telegram', '42', otherBindingId)).toBe('viewer');
    expect(await t.repos.allowlist.roleOf('telegram', '42')).toBe('viewer');

    await t.repos.allowlist.allow('global', 'telegram', '42', 'admin');
    expect(await t.repos.allowlist.roleOf('telegram', '42', bindingId)).toBe('admin');
  });

  it('keys roles by platform and immutable user id', async () => {
    await t.repos.allowlist.allow({ bindingId }, 'telegram', '42', 'operator');
    expect(await t.repos.allowlist.roleOf('slack', '42', bindingId)).toBeNull();
    expect(await t.repos.allowlist.roleOf('telegram', '43', bindingId)).toBeNull();
  });

  it('replaces the role on a second allow in the same scope', async () => {
    const first = await t.repos.allowlist.allow({ bindingId }, 'telegram', '42', 'admin');
    const second = await t.repos.allowlist.allow({ bindingId }, 'telegram', '42', 'viewer');
    expect(second).toMatchObject({ id: first.id, role: 'viewer', scope: `binding:${bindingId}` });
    expect(await t.repos.allowlist.list()).toHaveLength(1);
    expect(await t.repos.allowlist.roleOf('telegram', '42', bindingId)).toBe('viewer');
  });

  it('denies in exactly one scope', async () => {
    await t.repos.allowlist.allow('global', 'telegram', '42', 'viewer');
    await t.repos.allowlist.allow({ bindingId }, 'telegram', '42', 'admin');
    expect(await t.repos.allowlist.deny({ bindingId }, 'telegram', '42')).toBe(true);
    expect(await t.repos.allowlist.deny({ bindingId }, 'telegram', '42')).toBe(false);
    expect(await t.repos.allowlist.roleOf('telegram', '42', bindingId)).toBe('viewer');
  });

  it('lists entries with their scope, filtered by scope', async () => {
    await t.repos.allowlist.allow('global', 'telegram', '1', 'admin');
    await t.repos.allowlist.allow({ bindingId }, 'telegram', '2', 'operator');
    const all = await t.repos.allowlist.list();
    expect(all.map((e) => [e.scope, e.bindingId, e.userId, e.role])).toEqual([
      [`binding:${bindingId}`, bindingId, '2', 'operator'],
      ['global', null, '1', 'admin'],
    ]);
    expect((await t.repos.allowlist.list({ scope: 'global' })).map((e) => e.userId)).toEqual(['1']);
  });

  it('refuses a role in a binding that does not exist', async () => {
    const err = await t.repos.allowlist
      .allow({ bindingId: 999 }, 'telegram', '42', 'admin')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toBe('binding 999 does not exist');
  });

  it('orders roles viewer < operator < approver < admin', () => {
    expect(strongerRole('viewer', 'operator')).toBe('operator');
    expect(strongerRole('admin', 'approver')).toBe('admin');
    expect(strongerRole(null, 'viewer')).toBe('viewer');
    expect(strongerRole(null, null)).toBeNull();
  });
});
