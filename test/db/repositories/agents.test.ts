import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, NotFoundError } from '../../../src/errors.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('AgentsRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  it('adds, gets and lists agents with their JSON fields decoded', async () => {
    const added = await t.repos.agents.add({
      name: 'reviewer',
      engine: 'claude',
      argv: ['claude', '-p'],
      model: 'opus',
      env: { FOO: 'bar' },
      timeoutMs: 60_000,
      promptVia: 'file',
    });
    expect(added).toEqual({
      id: expect.any(Number),
      name: 'reviewer',
      engine: 'claude',
      argv: ['claude', '-p'],
      model: 'opus',
      env: { FOO: 'bar' },
      timeoutMs: 60_000,
      promptVia: 'file',
      permissions: null,
      enabled: true,
      createdAt: 1_000_000,
      updatedAt: 1_000_000,
    });
    await t.repos.agents.add({ name: 'builder', engine: 'command' });
    expect(await t.repos.agents.get('reviewer')).toEqual(added);
    expect(await t.repos.agents.get('nobody')).toBeNull();
    const builder = await t.repos.agents.get('builder');
    expect(builder).toMatchObject({
      argv: [],
      env: {},
      model: null,
      timeoutMs: null,
      enabled: true,
    });
    expect((await t.repos.agents.list()).map((a) => a.name)).toEqual(['builder', 'reviewer']);
  });

  it('refuses a second agent with the same name, saying so', async () => {
    await t.repos.agents.add({ name: 'x', engine: 'codex' });
    const err = await t.repos.agents.add({ name: 'x', engine: 'claude' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as ConflictError).code).toBe('CONFLICT');
    expect((err as Error).message).toBe("an agent named 'x' already exists");
  });

  it('enables and disables an agent, and removes it', async () => {
    await t.repos.agents.add({ name: 'x', engine: 'codex' });
    t.clock.now = 2_000_000;
    const disabled = await t.repos.agents.setEnabled('x', false);
    expect(disabled).toMatchObject({ enabled: false, updatedAt: 2_000_000, createdAt: 1_000_000 });
    expect((await t.repos.agents.setEnabled('x', true)).enabled).toBe(true);
    await expect(t.repos.agents.setEnabled('y', true)).rejects.toBeInstanceOf(NotFoundError);

    expect(await t.repos.agents.remove('x')).toBe(true);
    expect(await t.repos.agents.remove('x')).toBe(false);
    expect(await t.repos.agents.list()).toEqual([]);
  });
});
