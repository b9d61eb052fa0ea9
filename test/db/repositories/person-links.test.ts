/** Issue 36: identities linked as one person, and the one-time codes that link them. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

const TEN_MINUTES = 10 * 60 * 1000;

describe.each(DIALECT_NAMES)('PersonLinksRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  const bobT = { id: 'telegram:1002', name: '@bob', chat: 'telegram:-100' };
  const bobS = { id: 'slack:U02', name: 'bob.s', chat: 'slack:T1:C1' };
  const dave = { id: 'slack:U04', name: 'dave', chat: 'slack:T1:C1' };

  it('a code is claimed once, never by its issuer, and not after it expired', async () => {
    const links = t.repos.personLinks;
    await links.issueCode('h1', bobT, t.clock.now + TEN_MINUTES);
    expect(await links.claimCode('nope', bobS)).toEqual({ ok: false, problem: 'unknown' });
    expect(await links.claimCode('h1', bobT)).toEqual({ ok: false, problem: 'self' });
    const won = await links.claimCode('h1', bobS);
    expect(won).toMatchObject({ ok: true, code: { issuer: bobT, claimant: bobS } });
    expect(await links.claimCode('h1', dave)).toEqual({ ok: false, problem: 'used' });

    await links.issueCode('h2', bobT, t.clock.now + TEN_MINUTES);
    t.clock.now += TEN_MINUTES;
    expect(await links.claimCode('h2', bobS)).toEqual({ ok: false, problem: 'expired' });
  });

  it("a new code ends the issuer's earlier one; a claimed code is spent once", async () => {
    const links = t.repos.personLinks;
    await links.issueCode('old', bobT, t.clock.now + TEN_MINUTES);
    await links.issueCode('new', bobT, t.clock.now + TEN_MINUTES);
    expect(await links.claimCode('old', bobS)).toEqual({ ok: false, problem: 'used' });
    expect((await links.claimCode('new', bobS)).ok).toBe(true);
    expect((await links.claimedCodeOf(bobT.id))?.claimant?.id).toBe(bobS.id);
    expect(await links.spendCode('new', t.clock.now)).toBe(true);
    expect(await links.spendCode('new', t.clock.now)).toBe(false);
    expect(await links.claimedCodeOf(bobT.id)).toBeNull();
  });

  it('links, merges two persons, names them, and unlinks down to nobody', async () => {
    const links = t.repos.personLinks;
    await t.repos.people.remember({ id: bobT.id, name: '@bob' });
    await t.repos.people.remember({ id: bobS.id, name: 'bob.s' });
    const bob = await links.link(bobT, bobS);
    expect(bob).toMatchObject({ name: '@bob', identities: [bobT.id, bobS.id].sort() });
    // The audit names the person on every platform.
    const named = await t.repos.people.lookup([bobS.id, bobT.id]);
    expect([...named.values()].map((p) => p.name)).toEqual(['@bob', '@bob']);
    expect(await t.repos.people.platformName(bobS.id)).toBe('bob.s');

    // A third identity, in a person of its own with a fourth, joins with all of it.
    const cli = { id: 'cli:bob', name: 'bob' };
    const web = { id: 'web:bob', name: 'Bob' };
    await links.link(cli, web);
    const merged = await links.link(bobT, cli);
    expect(merged.personId).toBe(bob.personId);
    expect([...merged.identities].sort()).toEqual([bobT.id, bobS.id, cli.id, web.id].sort());
    expect(await links.list()).toHaveLength(1);

    expect((await links.unlink(web.id))?.identities).toHaveLength(4);
    expect(await links.personOf(web.id)).toBeNull();
    await links.unlink(cli.id);
    await links.unlink(bobS.id);
    // One identity left is no person.
    expect(await links.personOf(bobT.id)).toBeNull();
    expect(await links.list()).toEqual([]);
    expect(await links.unlink(bobT.id)).toBeNull();
  });
});
