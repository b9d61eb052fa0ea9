/**
 * The outbox's group commit, property-tested on the simulated clock: random bursts of sends and
 * edits, each queued within one turn of the event loop, through the real Outbox and its SQLite
 * rows. Whatever the bursts: each burst is written in ONE transaction (one fsync on a file),
 * no call reaches the platform before its row is committed, every send is delivered once, the
 * latest edit of a message is the one that stays, and every caller is answered.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TELEGRAM_LIMITS } from '../../../src/bridges/outbox/limits.ts';
import { Outbox } from '../../../src/bridges/outbox/outbox.ts';
import { OutboxStore } from '../../../src/bridges/outbox/store.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { SimClock, SimPlatform } from './sim.ts';

const CHATS = ['telegram:-1001', 'telegram:-1002', 'telegram:501'];

interface Op {
  chat: number;
  kind: 'send' | 'edit';
  pick: number;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  chat: fc.integer({ min: 0, max: CHATS.length - 1 }),
  kind: fc.constantFrom<'send' | 'edit'>('send', 'edit'),
  pick: fc.nat(),
});

describe('the outbox group commit', () => {
  it('one transaction per burst, each row committed before its call, latest edit wins', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 1, max: 3000 }),
            ops: fc.array(opArb, { minLength: 1, maxLength: 12 }),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.integer({ min: 1, max: 300 }),
        async (bursts, latency) => {
          const db = openBridgeDb({ file: ':memory:' });
          await migrateToLatest(db);
          const clock = new SimClock();
          const sqlite = db.sqlite;
          const platform = new SimPlatform('telegram', clock, () => latency);
          // At each call the platform receives: no transaction open, and the row is there.
          const problems: string[] = [];
          const inner = new Proxy(platform, {
            get(target, prop, receiver) {
              const value = Reflect.get(target, prop, receiver);
              if (prop !== 'send' && prop !== 'edit') return value;
              return (ref: string, message: { text: unknown }) => {
                const label = JSON.stringify(message.text);
                const rows = sqlite
                  .prepare('select count(*) as n from outbox where instr(payload_json, ?) > 0')
                  .get(label) as { n: number };
                if (sqlite.inTransaction || rows.n === 0) problems.push(`${label} not committed`);
                return (value as (...a: unknown[]) => unknown).call(target, ref, message);
              };
            },
          });
          const store = OutboxStore.on(sqlite, () => clock.now());
          let batches = 0;
          const writeBatch = store.writeBatch.bind(store);
          store.writeBatch = (inserts, replaces) => {
            batches++;
            return writeBatch(inserts, replaces);
          };
          const outbox = new Outbox({ store, inner, limits: TELEGRAM_LIMITS, timers: clock });
          outbox.start();
          const refs = new Map<string, string[]>();
          const lastEdit = new Map<string, string>();
          let queued = 0;
          let settled = 0;
          let sends = 0;
          let t = 0;
          let label = 0;
          let nonEmpty = 0;
          for (const burst of bursts) {
            const before = queued;
            t += burst.gap;
            await clock.runUntil(t);
            // The whole burst in one synchronous stretch: one turn of the event loop.
            for (const op of burst.ops) {
              const chat = CHATS[op.chat]!;
              const text = `m${label++}`;
              const message = { text: [plain(text)] };
              if (op.kind === 'send') {
                sends++;
                queued++;
                void outbox.enqueue('send', chat, message).then((ref) => {
                  settled++;
                  refs.set(chat, [...(refs.get(chat) ?? []), ref!]);
                });
                continue;
              }
              const known = refs.get(chat) ?? [];
              if (known.length === 0) continue;
              const target = known[op.pick % known.length]!;
              lastEdit.set(target, text);
              queued++;
              void outbox.enqueue('edit', target, message).then(() => settled++);
            }
            if (queued > before) nonEmpty++;
          }
          await clock.runAll();
          await db.close();
          // One transaction per burst that queued anything (edits of unknown messages queue nothing).
          expect(batches).toBe(nonEmpty);
          expect(problems).toEqual([]);
          const sent = platform.calls.filter((c) => c.kind === 'send').map((c) => c.text);
          expect(new Set(sent).size).toBe(sent.length);
          expect(sent).toHaveLength(sends);
          for (const [target, text] of lastEdit) {
            const edits = platform.calls.filter((c) => c.kind === 'edit' && c.target === target);
            expect(edits.at(-1)?.text, `last edit of ${target}`).toBe(text);
          }
          expect(settled).toBe(queued);
        },
      ),
      { numRuns: 60 },
    );
  });
});
