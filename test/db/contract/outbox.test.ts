/**
 * The outbox on both dialects: its table (group commits, keyed sends found again, pending edits
 * replaced, a confirmed send's message id written back to its checkpoint copy in the same
 * transaction, pruning) and the Outbox itself delivering through the real Telegram adapter
 * against the fake Bot API: edits of one message coalesce, and rows a stopped bridge left open
 * are delivered by the next one, once.
 */
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitsOf, Outbox } from '../../../src/bridges/outbox/index.ts';
import { outboxStoreOf } from '../../../src/bridges/outbox/store-of.ts';
import type { NewOutboxRow, OutboxStorePort } from '../../../src/bridges/outbox/store-port.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { type FakeChat, FakeTelegram } from '../../fakes/telegram.ts';
import { waitUntil } from '../../support/slowdown.ts';
import { DIALECT_NAMES, useContractDb } from './dialects.ts';

const GROUP: FakeChat = { id: -1001, type: 'supergroup', title: 'G1' };
const CHAT = `telegram:${GROUP.id}`;
const text = (t: string) => ({ text: [plain(t)] });
const send = (t: string, extra: Partial<NewOutboxRow['message']> = {}): NewOutboxRow => ({
  platform: 'telegram',
  lane: CHAT,
  kind: 'send',
  target: CHAT,
  message: { ...text(t), ...extra },
  urgency: 'notice',
});

describe.each(DIALECT_NAMES)('the outbox on %s', (dialect) => {
  const t = useContractDb(dialect);
  if (t === undefined) return;
  const stores: OutboxStorePort[] = [];
  const store = async () => {
    const s = await outboxStoreOf(t().db, () => t().clock.now);
    stores.push(s);
    return s;
  };
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('writes a group commit, finds a keyed send again and replaces only pending edits', async () => {
    const s = await store();
    const first = await s.writeBatch([send('a', { key: 'k1' }), send('b')], []);
    expect(first.found).toEqual([undefined, undefined]);
    const [a, b] = first.ids as [number, number];
    expect((await s.open('telegram')).map((r) => [r.id, r.state])).toEqual([
      [a, 'pending'],
      [b, 'pending'],
    ]);
    // The same key to the same chat (a restart replaying it) is the first row, not a new one.
    const again = await s.writeBatch([send('a again', { key: 'k1' })], []);
    expect(again.ids).toEqual([a]);
    expect(again.found[0]?.message).toEqual({ ...text('a'), key: 'k1' });

    const edit = { ...send('e1'), kind: 'edit' as const, target: `${CHAT}/5` };
    const [e] = (await s.writeBatch([edit], [])).ids as [number];
    const replaced = await s.writeBatch(
      [],
      [{ id: e, urgency: 'status', row: { ...edit, message: text('e2') } }],
    );
    expect(replaced.replaced).toEqual([null]);
    expect((await s.get(e))?.message).toEqual(text('e2'));
    await s.attempted(e);
    const late = await s.writeBatch(
      [],
      [{ id: e, urgency: 'status', row: { ...edit, message: text('e3') } }],
    );
    expect(late.replaced[0]).toEqual(expect.any(Number));
    expect(late.replaced[0]).not.toBe(e);
    expect(await s.get(e)).toMatchObject({ state: 'attempted', attempts: 1, message: text('e2') });
  });

  it('a confirmed send tells its checkpoint copy the message id; failed keys are given up', async () => {
    const { repos } = t();
    await repos.runs.upsert({
      id: '2026-01-01T000000Z-r',
      workflowId: 'demo',
      workspace: '/ws',
      layout: 'native',
      status: 'awaiting',
    });
    const copy = await repos.checkpointMessages.add({
      runId: '2026-01-01T000000Z-r',
      checkpointId: 'plan:1',
      chatRef: CHAT,
    });
    const s = await store();
    const owner = { kind: 'checkpoint' as const, id: copy.id };
    const [id] = (await s.writeBatch([send('checkpoint', { owner })], [])).ids as [number];
    expect(await s.openFor(owner)).toBe(true);
    await s.attempted(id);
    await s.confirmed(id, `${CHAT}/77`);
    expect(await s.openFor(owner)).toBe(false);
    expect((await repos.checkpointMessages.findByToken(copy.buttonToken))?.messageRef).toBe(
      `${CHAT}/77`,
    );
    expect(await s.get(id)).toMatchObject({ state: 'confirmed', resultRef: `${CHAT}/77` });

    const [k] = (await s.writeBatch([send('k', { key: 'k2' })], [])).ids as [number];
    await s.failed(k, 'PLATFORM', 'refused');
    const retried = await s.writeBatch([send('k', { key: 'k2' })], []);
    expect(retried.found).toEqual([undefined]);
    expect(retried.ids[0]).not.toBe(k);

    t().clock.now += 10;
    expect((await s.recent('telegram', 0)).map((r) => r.state).sort()).toEqual([
      'confirmed',
      'failed',
    ]);
    expect(await s.prune(t().clock.now)).toBe(2);
    expect((await s.open('telegram')).map((r) => r.id)).toEqual([retried.ids[0]]);
  });

  it("a session offer's send tells the copy its id; its closing's confirmation marks it shown", async () => {
    const { repos } = t();
    const key = { workspace: '/ws', kind: 'flow' as const, session: 's1', state: 'blocked' };
    const copy = await repos.sessionOffers.add(key, CHAT, 'run-1');
    const s = await store();
    const [id] = (
      await s.writeBatch([send('offer', { owner: { kind: 'offer', id: copy.id } })], [])
    ).ids as [number];
    await s.attempted(id);
    await s.confirmed(id, `${CHAT}/78`);
    await repos.sessionOffers.decide(key, 'abort', 'telegram:7', { key: 'chat:k', chat: CHAT });
    expect((await repos.sessionOffers.unshown()).map((c) => c.messageRef)).toEqual([`${CHAT}/78`]);
    const closing = { kind: 'offerClosed' as const, id: copy.id };
    const edit = {
      ...send('closed', { owner: closing }),
      kind: 'edit' as const,
      target: `${CHAT}/78`,
    };
    const [editId] = (await s.writeBatch([edit], [])).ids as [number];
    await s.attempted(editId);
    await s.confirmed(editId, null);
    expect(await repos.sessionOffers.unshown()).toEqual([]);
    expect(await repos.sessionOffers.get(copy.id)).toMatchObject({
      messageRef: `${CHAT}/78`,
      runId: 'run-1',
      decisionShown: true,
    });
  });

  it('knows the messages of a chat: sent, edited, and those its owners keep', async () => {
    const { repos } = t();
    await repos.runs.upsert({
      id: '2026-01-01T000000Z-k',
      workflowId: 'demo',
      workspace: '/ws',
      layout: 'native',
      status: 'awaiting',
    });
    const copy = await repos.checkpointMessages.add({
      runId: '2026-01-01T000000Z-k',
      checkpointId: 'plan:1',
      chatRef: CHAT,
    });
    await repos.checkpointMessages.setMessageRef(copy.id, `${CHAT}/40`);
    const s = await store();
    const [sent, other] = (
      await s.writeBatch(
        [send('a'), { ...send('b'), lane: 'telegram:7', target: 'telegram:7' }],
        [],
      )
    ).ids as [number, number];
    await s.confirmed(sent, `${CHAT}/41`);
    await s.confirmed(other, 'telegram:7/9');
    await s.writeBatch([{ ...send('e'), kind: 'edit', target: `${CHAT}/12` }], []);
    expect((await s.knownRefs('telegram', CHAT)).sort()).toEqual(
      [`${CHAT}/12`, `${CHAT}/40`, `${CHAT}/41`].sort(),
    );
  });

  describe('delivering through Telegram', () => {
    let fake: FakeTelegram;
    const outboxes: Outbox[] = [];
    beforeEach(async () => {
      fake = await FakeTelegram.start({ limits: true });
      fake.addChat(GROUP);
    });
    afterEach(async () => {
      for (const o of outboxes.splice(0)) await o.stop();
      await fake.close();
    });
    const outbox = async () => {
      const inner = new TelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, commands: [] });
      const o = new Outbox({ store: await store(), inner, limits: limitsOf('telegram') });
      outboxes.push(o);
      return o;
    };

    it('sends, and edits queued together go out as one call with the latest text', async () => {
      const o = await outbox();
      o.start();
      const ref = await o.enqueue('send', CHAT, text('v1'));
      expect(ref).toMatch(/^telegram:-1001\/\d+$/);
      const edits = ['v2', 'v3', 'v4'].map((v) => o.enqueue('edit', ref!, text(v)));
      expect(await Promise.all(edits)).toEqual([null, null, null]);
      expect(fake.okCalls('editMessageText')).toHaveLength(1);
      expect(fake.botMessages(GROUP.id).map((m) => m.text)).toEqual(['v4']);
      const rows = await t()
        .db.kysely.selectFrom('outbox')
        .select(['kind', 'state'])
        .orderBy('id')
        .execute();
      expect(rows).toEqual([
        { kind: 'send', state: 'confirmed' },
        { kind: 'edit', state: 'confirmed' },
      ]);
    });

    it('the platform is handed a call only once bridge.db shows it attempted', async () => {
      // A leader killed with the call in flight must leave the row `attempted`: the next one
      // then knows a copy may exist (a repeat loses its buttons, a press on it counts).
      const { db } = t();
      if (db.dialect === 'postgres') {
        // The mark's commit takes 300 ms: a call made before it would see the row `pending`.
        await sql`create function slow_mark() returns trigger language plpgsql as
          $$ begin perform pg_sleep(0.3); return new; end $$`.execute(db.kysely);
        await sql`create trigger slow_mark before update on outbox for each row
          when (new.state = 'attempted') execute function slow_mark()`.execute(db.kysely);
      }
      const seen: string[] = [];
      fake.onArrival = async (method) => {
        if (method !== 'sendMessage') return;
        const row = await db.kysely.selectFrom('outbox').select('state').executeTakeFirst();
        seen.push(row?.state ?? 'no row');
      };
      const o = await outbox();
      o.start();
      await o.enqueue('send', CHAT, text('hello'));
      expect(seen).toEqual(['attempted']);
    });

    // SQLite writes the mark synchronously: a failure there throws at once, as any write does.
    it.runIf(dialect === 'postgres')(
      'a mark that cannot be written holds the call back; it is made once the mark is in',
      async () => {
        const { db } = t();
        await sql`create sequence mark_tries`.execute(db.kysely);
        await sql`create function fail_first_mark() returns trigger language plpgsql as
          $$ begin if nextval('mark_tries') = 1 then raise exception 'disk full'; end if;
          return new; end $$`.execute(db.kysely);
        await sql`create trigger fail_first_mark before update on outbox for each row
          when (new.state = 'attempted') execute function fail_first_mark()`.execute(db.kysely);
        const seen: string[] = [];
        fake.onArrival = async (method) => {
          if (method !== 'sendMessage') return;
          const row = await db.kysely.selectFrom('outbox').select('state').executeTakeFirst();
          seen.push(row?.state ?? 'no row');
        };
        const o = await outbox();
        o.start();
        expect(await o.enqueue('send', CHAT, text('hello'))).toMatch(/^telegram:-1001\/\d+$/);
        expect(seen).toEqual(['attempted']);
        expect(fake.botMessages(GROUP.id).map((m) => m.text)).toEqual(['hello']);
      },
    );

    it('rows a stopped bridge left queued are delivered by the next, once', async () => {
      const first = await outbox();
      const left = [
        first.enqueue('send', CHAT, text('one')),
        first.enqueue('send', CHAT, text('two')),
      ];
      // Never started: stopping writes the rows and answers the callers "stays queued".
      await first.stop();
      for (const p of left) await expect(p).rejects.toThrow(/stays queued/);
      expect(fake.okCalls('sendMessage')).toHaveLength(0);

      const next = await outbox();
      next.start();
      // The loaded rows have no caller waiting: wait for the platform to have them.
      await waitUntil(() => fake.okCalls('sendMessage').length >= 2, {
        timeoutMs: 20_000,
        message: 'the rows left open were not delivered',
      });
      expect(fake.botMessages(GROUP.id).map((m) => m.text)).toEqual(['one', 'two']);
      await next.stop();
      expect(fake.okCalls('sendMessage')).toHaveLength(2);
    });
  });
});
