/**
 * The chat state kept in bridge.db (0005): status message refs, open reason prompts, console
 * logins and sessions, and the adapters' key/value store. Each survives reopening the database, as
 * after a restart of the bridge; on both dialects.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRepositories, type Repositories } from '../../../src/db/repositories/index.ts';
import { ConflictError } from '../../../src/errors.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

describe.each(DIALECT_NAMES)('durable chat state on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
  });
  afterEach(() => t.cleanup());

  /** The repositories of a second connection to the same database (another process, or a restart). */
  async function reopened(): Promise<Repositories> {
    return createRepositories(await t.reopen(), { now: () => t.clock.now });
  }

  describe('StatusMessagesRepo', () => {
    it('keeps one status message per run and chat, replaced by a new one, across connections', async () => {
      const refs = t.repos.statusMessages;
      expect(await refs.get('r1', 'telegram:-1')).toBeNull();
      await refs.set('r1', 'telegram:-1', 'telegram:-1/100');
      await refs.set('r1', 'web:console', 'web:console#a.1');
      await refs.set('r1', 'telegram:-1', 'telegram:-1/107');
      await refs.set('r2', 'telegram:-1', 'telegram:-1/200');
      const other = await reopened();
      expect(await other.statusMessages.get('r1', 'telegram:-1')).toBe('telegram:-1/107');
      expect(await other.statusMessages.chatsOf('r1')).toEqual(['telegram:-1', 'web:console']);

      await refs.delete('r1', 'web:console');
      expect(await refs.get('r1', 'web:console')).toBeNull();
      expect(await refs.deleteRun('r1')).toBe(1);
      expect(await refs.get('r2', 'telegram:-1')).toBe('telegram:-1/200');
    });
  });

  describe('ReasonPromptsRepo', () => {
    const ask = {
      promptRef: 'telegram:-1/150',
      platform: 'telegram',
      userId: '502',
      runId: 'r1',
      checkpointId: 'plan:1',
      answer: 'reject' as const,
      askedAt: 1_000,
      expiresAt: 5_000,
    };

    it("hands a prompt to its presser's answer once, also on another connection", async () => {
      await t.repos.reasonPrompts.add(ask);
      const other = await reopened();
      expect(await other.reasonPrompts.take(ask.promptRef, 'telegram', '503', 2_000)).toBeNull();
      const [a, b] = await Promise.all([
        other.reasonPrompts.take(ask.promptRef, 'telegram', '502', 2_000),
        t.repos.reasonPrompts.take(ask.promptRef, 'telegram', '502', 2_000),
      ]);
      expect([a, b].filter((p) => p !== null)).toEqual([ask]);
    });

    it('finds the open prompt of its presser, leaving it open until it is taken', async () => {
      await t.repos.reasonPrompts.add(ask);
      const other = await reopened();
      expect(await other.reasonPrompts.find(ask.promptRef, 'telegram', '503', 2_000)).toBeNull();
      expect(await other.reasonPrompts.find(ask.promptRef, 'telegram', '502', 5_000)).toBeNull();
      expect(await other.reasonPrompts.find(ask.promptRef, 'telegram', '502', 2_000)).toEqual(ask);
      expect(await t.repos.reasonPrompts.find(ask.promptRef, 'telegram', '502', 2_000)).toEqual(
        ask,
      );
      expect(await t.repos.reasonPrompts.take(ask.promptRef, 'telegram', '502', 0)).toEqual(ask);
      expect(await other.reasonPrompts.find(ask.promptRef, 'telegram', '502', 2_000)).toBeNull();
    });

    it('does not hand out an expired prompt, and purges it', async () => {
      await t.repos.reasonPrompts.add(ask);
      await t.repos.reasonPrompts.add({ ...ask, userId: '504', expiresAt: 9_000 });
      expect(await t.repos.reasonPrompts.take(ask.promptRef, 'telegram', '502', 5_000)).toBeNull();
      expect(await t.repos.reasonPrompts.deleteExpired(5_000)).toBe(1);
      expect(
        await t.repos.reasonPrompts.take(ask.promptRef, 'telegram', '504', 5_000),
      ).toMatchObject({ userId: '504' });
    });
  });

  describe('ConsoleAuthRepo', () => {
    it('a login token added by one connection is used once by another, before it expires', async () => {
      await t.repos.consoleAuth.addLoginToken('digest-a', 5_000);
      await t.repos.consoleAuth.addLoginToken('digest-b', 5_000);
      await expect(t.repos.consoleAuth.addLoginToken('digest-a', 9_000)).rejects.toBeInstanceOf(
        ConflictError,
      );
      const bridge = await reopened();
      expect(await bridge.consoleAuth.consumeLoginToken('digest-a', 4_999)).toBe(true);
      expect(await bridge.consoleAuth.consumeLoginToken('digest-a', 4_999)).toBe(false);
      expect(await bridge.consoleAuth.consumeLoginToken('digest-b', 5_000)).toBe(false);
    });

    it('keeps sessions by cookie digest, records their use, and prunes idle ones', async () => {
      const auth = t.repos.consoleAuth;
      await auth.addSession('cookie-1', { sessionId: 's1', createdAt: 1_000, lastSeenAt: 1_000 });
      await auth.addSession('cookie-2', { sessionId: 's2', createdAt: 1_000, lastSeenAt: 1_000 });
      await auth.touchSession('cookie-1', 8_000);
      expect(await (await reopened()).consoleAuth.findSession('cookie-1')).toEqual({
        sessionId: 's1',
        createdAt: 1_000,
        lastSeenAt: 8_000,
        person: null,
        expiresAt: null,
      });
      await auth.prune(9_000, 5_000);
      expect(await auth.findSession('cookie-2')).toBeNull();
      await auth.deleteSession('cookie-1');
      expect(await auth.findSession('cookie-1')).toBeNull();
    });
  });

  describe('ChannelStateRepo', () => {
    it("keeps each platform's entries apart, lists them by prefix, and forgets expired ones", async () => {
      const web = t.repos.channelState.scope('web');
      const discord = t.repos.channelState.scope('discord');
      await web.set('msg:b', '2');
      await web.set('msg:a', '1');
      await web.set('msg%x', 'not a msg: entry');
      await web.set('prompt:p', 'p', 1_000);
      await discord.set('msg:a', 'discord');
      await web.set('msg:a', '1 edited');
      const restarted = (await reopened()).channelState.scope('web');
      expect(await restarted.list('msg:')).toEqual([
        { key: 'msg:a', value: '1 edited' },
        { key: 'msg:b', value: '2' },
      ]);
      expect(await restarted.get('prompt:p')).toBe('p');
      t.clock.now += 1_000;
      expect(await restarted.get('prompt:p')).toBeUndefined();
      expect(await restarted.list('prompt:')).toEqual([]);
      await web.delete('msg:b');
      expect(await web.list('msg:')).toEqual([{ key: 'msg:a', value: '1 edited' }]);
      expect(await discord.get('msg:a')).toBe('discord');
      expect(await t.repos.channelState.deleteExpired(t.clock.now)).toBe(1);
    });
  });
});
