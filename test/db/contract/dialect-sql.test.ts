/**
 * The SQL that differs between the dialects (src/db/dialects), through the repositories that use
 * it: a message part found in a split message's ref, the outbox owner looked up in its JSON, a
 * search that ignores case and treats wildcards as text, and constraint failures in our words.
 */
import { describe, expect, it } from 'vitest';
import { mapSqliteError } from '../../../src/db/sqlite-errors.ts';
import { ConflictError, InvalidInputError } from '../../../src/errors.ts';
import { DIALECT_NAMES, useContractDb } from './dialects.ts';

describe.each(DIALECT_NAMES)('dialect SQL on %s', (dialect) => {
  const t = useContractDb(dialect);
  if (t === undefined) return;

  /** Queues an outbox call owned by `owner`, in `state`. */
  async function outboxCall(owner: object, state: 'pending' | 'confirmed'): Promise<void> {
    await t!()
      .db.kysely.insertInto('outbox')
      .values({
        platform: 'telegram',
        lane: 'telegram:1',
        kind: 'edit',
        target: 'telegram:1/5',
        payload_json: '{}',
        urgency: 'interactive',
        state,
        created_at: 1,
        updated_at: 1,
        owner_json: JSON.stringify(owner),
      })
      .execute();
  }

  it('finds the run of one part of a message sent in parts, and no other', async () => {
    const { repos } = t();
    await repos.statusMessages.set('r1', 'telegram:-1', 'telegram:-1/100,101,102');
    expect(await repos.statusMessages.runOfMessage('telegram:-1/101')).toBe('r1');
    expect(await repos.statusMessages.runOfMessage('telegram:-1/100,101,102')).toBe('r1');
    expect(await repos.statusMessages.runOfMessage('telegram:-1/10')).toBeNull();
    expect(await repos.statusMessages.runOfMessage('telegram:-2/101')).toBeNull();
  });

  it('sees a closed checkpoint copy whose decision edit still waits in the outbox', async () => {
    const { repos, clock } = t();
    await repos.runs.upsert({
      id: 'run-1',
      workflowId: 'demo',
      workspace: '/w',
      layout: 'native',
      status: 'awaiting',
      createdAt: clock.now,
      updatedAt: clock.now,
    });
    const waiting = await repos.checkpointMessages.add({
      runId: 'run-1',
      checkpointId: 'c1',
      chatRef: 'telegram:1',
    });
    const done = await repos.checkpointMessages.add({
      runId: 'run-1',
      checkpointId: 'c2',
      chatRef: 'telegram:1',
    });
    await t().db.kysely.updateTable('checkpoint_messages').set({ state: 'decided' }).execute();
    await outboxCall({ kind: 'checkpoint', id: waiting.id }, 'pending');
    await outboxCall({ kind: 'checkpoint', id: done.id }, 'confirmed');
    const unshown = await repos.checkpointMessages.unshownDecisions();
    expect(unshown.map((m) => [m.id, m.inFlight])).toEqual([
      [waiting.id, true],
      [done.id, false],
    ]);
  });

  it("knows whether a session offer's send still waits in the outbox", async () => {
    const { repos } = t();
    const key = { workspace: '/w', kind: 'flow' as const, session: 's1', state: 'interrupted' };
    const first = await repos.sessionOffers.add(key, 'telegram:1');
    const second = await repos.sessionOffers.add(key, 'telegram:2');
    await outboxCall({ kind: 'offer', id: first.id }, 'pending');
    // Same id, other owner kind: not the offer's send.
    await outboxCall({ kind: 'checkpoint', id: second.id }, 'pending');
    expect(await repos.sessionOffers.sendInFlight(first.id)).toBe(true);
    expect(await repos.sessionOffers.sendInFlight(second.id)).toBe(false);
  });

  it('sees a closed session offer copy whose send or closing edit still waits in the outbox', async () => {
    const { repos } = t();
    const key = { workspace: '/w', kind: 'flow' as const, session: 's1', state: 'blocked' };
    const sending = await repos.sessionOffers.add(key, 'telegram:1');
    const closing = await repos.sessionOffers.add(key, 'telegram:2');
    const done = await repos.sessionOffers.add(key, 'telegram:3');
    expect(await repos.sessionOffers.unshown()).toEqual([]);
    await repos.sessionOffers.decide(key, 'abort', 'telegram:7', { key: 'chat:k', chat: 'x' });
    await outboxCall({ kind: 'offer', id: sending.id }, 'pending');
    await outboxCall({ kind: 'offerClosed', id: closing.id }, 'pending');
    await outboxCall({ kind: 'offerClosed', id: done.id }, 'confirmed');
    const unshown = await repos.sessionOffers.unshown();
    expect(unshown.map((m) => [m.id, m.inFlight])).toEqual([
      [sending.id, true],
      [closing.id, true],
      [done.id, false],
    ]);
    expect(unshown[0]).toMatchObject({ decisionKey: 'chat:k', decidedIn: 'x', outcome: null });
    expect((await repos.sessionOffers.unapplied()).map((m) => m.id)).toEqual([
      sending.id,
      closing.id,
      done.id,
    ]);
    await repos.sessionOffers.applied(key, 'aborted');
    expect(await repos.sessionOffers.unapplied()).toEqual([]);
  });

  it('searches runs ignoring case, with % and _ as plain text', async () => {
    const { repos } = t();
    for (const [id, spec] of [
      ['run-a', 'Give the LOGIN page 50% more contrast'],
      ['run-b', 'login page 50 more contrast'],
    ] as const) {
      await repos.runs.upsert({
        id,
        workflowId: 'demo',
        workspace: '/w',
        layout: 'native',
        status: 'completed',
        createdAt: 1,
        updatedAt: 1,
        spec,
      });
    }
    const ids = async (text: string) =>
      (await repos.runs.search({ text, limit: 10 })).items.map((r) => r.id).sort();
    expect(await ids('login')).toEqual(['run-a', 'run-b']);
    expect(await ids('50%')).toEqual(['run-a']);
    expect(await ids('RUN_A')).toEqual([]);
    expect(await ids('RUN-A')).toEqual(['run-a']);
  });

  it('reports a duplicate as ConflictError and a forbidden value as InvalidInputError', async () => {
    const { repos, db } = t();
    await repos.agents.add({ name: 'reviewer', engine: 'claude' });
    await expect(repos.agents.add({ name: 'reviewer', engine: 'codex' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    const forbidden = await db.kysely
      .insertInto('audit')
      .values({ at: 1, actor: 'a', action: 'x', outcome: 'maybe' as 'allowed' })
      .execute()
      .catch((err: unknown) => mapSqliteError(err, 'an audit entry'));
    expect(forbidden).toBeInstanceOf(InvalidInputError);
    expect((forbidden as Error).message).toMatch(
      /^an audit entry has an invalid value \(.*outcome/,
    );
    const dangling = await db.kysely
      .insertInto('allowlist')
      .values({ binding_id: 999, platform: 'telegram', user_id: '1', role: 'admin', created_at: 1 })
      .execute()
      .catch((err: unknown) => mapSqliteError(err, 'a role'));
    expect(dangling).toBeInstanceOf(ConflictError);
  });
});
