import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('BindingsRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('binds a chat and finds it', async () => {
    const b = await t.repos.bindings.bind({
      chatRef: 'telegram:-100123',
      workspace: '/srv/app',
      defaultWorkflow: 'pabcd',
      notify: { phases: true },
    });
    expect(b).toEqual({
      id: expect.any(Number),
      chatRef: 'telegram:-100123',
      thread: null,
      workspace: '/srv/app',
      defaultWorkflow: 'pabcd',
      defaultAgent: null,
      notify: { phases: true },
      createdAt: 1_000_000,
      updatedAt: 1_000_000,
    });
    expect(await t.repos.bindings.find('telegram:-100123')).toEqual(b);
    expect(await t.repos.bindings.get(b.id)).toEqual(b);
    expect(await t.repos.bindings.find('telegram:-999')).toBeNull();
  });

  it('finds a thread binding first and falls back to the chat-wide one', async () => {
    const chat = await t.repos.bindings.bind({ chatRef: 'slack:T1:C1', workspace: '/a' });
    const thread = await t.repos.bindings.bind({
      chatRef: 'slack:T1:C1',
      thread: '1700.01',
      workspace: '/b',
    });
    expect((await t.repos.bindings.find('slack:T1:C1', '1700.01'))?.id).toBe(thread.id);
    expect((await t.repos.bindings.find('slack:T1:C1', '1700.99'))?.id).toBe(chat.id);
    expect((await t.repos.bindings.find('slack:T1:C1'))?.id).toBe(chat.id);

    await t.repos.bindings.remove('slack:T1:C1');
    expect(await t.repos.bindings.find('slack:T1:C1', '1700.99')).toBeNull();
    expect((await t.repos.bindings.find('slack:T1:C1', '1700.01'))?.id).toBe(thread.id);
  });

  it('re-binding updates in place: same id, omitted fields kept, null clears', async () => {
    const first = await t.repos.bindings.bind({
      chatRef: 'discord:1:2',
      workspace: '/a',
      defaultWorkflow: 'demo',
      defaultAgent: 'claude',
      notify: { quiet: true },
    });
    t.clock.now = 2_000_000;
    const second = await t.repos.bindings.bind({
      chatRef: 'discord:1:2',
      workspace: '/b',
      defaultAgent: null,
    });
    expect(second).toMatchObject({
      id: first.id,
      workspace: '/b',
      defaultWorkflow: 'demo',
      defaultAgent: null,
      notify: { quiet: true },
      createdAt: 1_000_000,
      updatedAt: 2_000_000,
    });
    expect(await t.repos.bindings.list()).toHaveLength(1);
  });

  it('lists bindings and removing one drops its allowlist entries', async () => {
    const b = await t.repos.bindings.bind({ chatRef: 'telegram:1', workspace: '/a' });
    await t.repos.bindings.bind({ chatRef: 'telegram:1', thread: '7', workspace: '/a' });
    expect((await t.repos.bindings.list()).map((x) => x.thread)).toEqual([null, '7']);

    await t.repos.allowlist.allow({ bindingId: b.id }, 'telegram', '42', 'operator');
    expect(await t.repos.bindings.remove('telegram:1')).toBe(true);
    expect(await t.repos.bindings.remove('telegram:1')).toBe(false);
    expect(await t.repos.allowlist.list()).toEqual([]);
  });
});
