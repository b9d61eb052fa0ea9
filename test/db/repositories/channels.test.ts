import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('ChannelsRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('upserts, gets and lists channels', async () => {
    const tg = await t.repos.channels.upsert({
      id: 'telegram',
      platform: 'telegram',
      config: { mode: 'polling' },
    });
    expect(tg).toEqual({
      id: 'telegram',
      platform: 'telegram',
      displayName: null,
      config: { mode: 'polling' },
      createdAt: 1_000_000,
    });
    t.clock.now = 2_000_000;
    const renamed = await t.repos.channels.upsert({
      id: 'telegram',
      platform: 'telegram',
      displayName: 'Ops bot',
    });
    expect(renamed).toEqual({ ...tg, displayName: 'Ops bot', config: {} });
    await t.repos.channels.upsert({ id: 'slack', platform: 'slack' });
    expect((await t.repos.channels.list()).map((c) => c.id)).toEqual(['slack', 'telegram']);
    expect(await t.repos.channels.get('discord')).toBeNull();
  });
});
