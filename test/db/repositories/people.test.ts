/** Issue 29: the name each person was last seen under, for decisions stored by id. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openTestDb, type TestDb } from '../helpers.ts';

describe('PeopleRepo', () => {
  let t: TestDb;
  beforeEach(async () => {
    t = await openTestDb();
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
