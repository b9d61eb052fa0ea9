/** Issue 29: the name each person was last seen under, for decisions stored by id. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('PeopleRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('remembers the latest name by id; unknown ids come back without one', async () => {
    await t.repos.people.remember({ id: 'telegram:3003', name: 'Carol' });
    await t.repos.people.remember({ id: 'telegram:3003', name: '@carol' });
    // No name, or a name that is only the id, teaches nothing.
    await t.repos.people.remember({ id: 'telegram:3003' });
    await t.repos.people.remember({ id: 'slack:U1', name: 'slack:U1' });
    const got = await t.repos.people.lookup(['telegram:3003', 'slack:U1', 'telegram:3003']);
    expect([...got.values()]).toEqual([
      { id: 'telegram:3003', name: '@carol' },
      { id: 'slack:U1' },
    ]);
    expect(await t.repos.people.person('nobody:1')).toEqual({ id: 'nobody:1' });
  });
});
