import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/errors.ts';
import { DIALECT_NAMES, type DialectTestDb, testDbOn } from '../contract/dialects.ts';

const RUN_ID = '2026-11-29T143000Z-add-login';

describe.each(DIALECT_NAMES)('CheckpointMessagesRepo on %s', (dialect) => {
  const open = testDbOn(dialect);
  if (open === undefined) return;
  let t: DialectTestDb;
  beforeEach(async () => {
    t = await open();
    await t.repos.runs.upsert({
      id: RUN_ID,
      workflowId: 'demo',
      workspace: '/a',
      layout: 'native',
      status: 'awaiting',
    });
  });
  afterEach(() => t.cleanup());

  it('stores a message with a fresh random token and finds it by token', async () => {
    const msg = await t.repos.checkpointMessages.add({
      runId: RUN_ID,
      checkpointId: 'plan:1',
      chatRef: 'telegram:1',
    });
    expect(msg).toMatchObject({ state: 'open', messageRef: null, createdAt: 1_000_000 });
    expect(msg.buttonToken).toMatch(/^[A-Za-z0-9_-]{22}$/);
    const other = await t.repos.checkpointMessages.add({
      runId: RUN_ID,
      checkpointId: 'plan:1',
      chatRef: 'slack:T:C',
    });
    expect(other.buttonToken).not.toBe(msg.buttonToken);

    const sent = await t.repos.checkpointMessages.setMessageRef(msg.id, 'telegram:1:77');
    expect(await t.repos.checkpointMessages.findByToken(msg.buttonToken)).toEqual(sent);
    expect(sent.messageRef).toBe('telegram:1:77');
    expect(await t.repos.checkpointMessages.findByToken('forged')).toBeNull();
  });

  it('marks every copy of a checkpoint decided, once', async () => {
    for (const chatRef of ['telegram:1', 'slack:T:C']) {
      await t.repos.checkpointMessages.add({ runId: RUN_ID, checkpointId: 'plan:1', chatRef });
    }
    await t.repos.checkpointMessages.add({ runId: RUN_ID, checkpointId: 'plan:2', chatRef: 'x' });
    t.clock.now = 2_000_000;
    expect(await t.repos.checkpointMessages.markDecided(RUN_ID, 'plan:1')).toBe(2);
    expect(await t.repos.checkpointMessages.markDecided(RUN_ID, 'plan:1')).toBe(0);
    expect(await t.repos.checkpointMessages.markExpired(RUN_ID, 'plan:1')).toBe(0);

    const copies = await t.repos.checkpointMessages.listByCheckpoint(RUN_ID, 'plan:1');
    expect(copies.map((c) => [c.chatRef, c.state, c.updatedAt])).toEqual([
      ['telegram:1', 'decided', 2_000_000],
      ['slack:T:C', 'decided', 2_000_000],
    ]);
    expect(await t.repos.checkpointMessages.markExpired(RUN_ID, 'plan:2')).toBe(1);
  });

  it('refuses a message for a run that is not indexed, or a reused token', async () => {
    const orphan = await t.repos.checkpointMessages
      .add({ runId: 'nope', checkpointId: 'c', chatRef: 'x' })
      .catch((e: unknown) => e);
    expect(orphan).toBeInstanceOf(ConflictError);
    expect((orphan as Error).message).toBe("run 'nope' is not in the run index");

    await t.repos.checkpointMessages.add({
      runId: RUN_ID,
      checkpointId: 'c',
      chatRef: 'x',
      buttonToken: 't',
    });
    await expect(
      t.repos.checkpointMessages.add({
        runId: RUN_ID,
        checkpointId: 'c',
        chatRef: 'y',
        buttonToken: 't',
      }),
    ).rejects.toThrow('this button token is already in use');
  });

  it('drops the messages of a run removed from the index', async () => {
    const msg = await t.repos.checkpointMessages.add({
      runId: RUN_ID,
      checkpointId: 'c',
      chatRef: 'x',
    });
    await t.db.kysely.deleteFrom('runs').where('id', '=', RUN_ID).execute();
    expect(await t.repos.checkpointMessages.findByToken(msg.buttonToken)).toBeNull();
  });

  it('finds the run of a message from the ref of any one of its parts', async () => {
    const msg = await t.repos.checkpointMessages.add({
      runId: RUN_ID,
      checkpointId: 'plan:1',
      chatRef: 'slack:T:C',
    });
    await t.repos.checkpointMessages.setMessageRef(msg.id, 'slack:T:C/1.000100,1.000200,1.000300');
    const cm = t.repos.checkpointMessages;
    expect(await cm.runOfMessage('slack:T:C/1.000100,1.000200,1.000300')).toBe(RUN_ID);
    for (const part of ['1.000100', '1.000200', '1.000300']) {
      expect(await cm.runOfMessage(`slack:T:C/${part}`)).toBe(RUN_ID);
    }
    // Another chat, another message, a prefix of an id: not this message.
    expect(await cm.runOfMessage('slack:T:D/1.000100')).toBeNull();
    expect(await cm.runOfMessage('slack:T:C/1.000400')).toBeNull();
    expect(await cm.runOfMessage('slack:T:C/1.0001')).toBeNull();
    expect(await cm.runOfMessage('slack:T:C')).toBeNull();
    await t.repos.statusMessages.set(RUN_ID, 'discord:1:2', 'discord:1:2/30,31');
    expect(await t.repos.statusMessages.runOfMessage('discord:1:2/31')).toBe(RUN_ID);
    expect(await t.repos.statusMessages.runOfMessage('discord:1:2/3')).toBeNull();
  });
});
