/**
 * The outbox table on Postgres, the twin of OutboxStore (store.ts): the same rows and rules,
 * through kysely's pool. Each method is one transaction (or one statement), committed with the
 * server's durability (`synchronous_commit`, on by default) before it resolves; the Outbox runs
 * them in order (WriteChain) and starts no call while its group commit is in flight. Given a
 * leader's fencing token, every write checks it in its own transaction (db/leader-fence.ts): a
 * paused old leader that wakes after a takeover writes no row, claim or confirmation.
 */
import { type Kysely, sql, type UpdateObject } from 'kysely';
import type { PostgresDb } from '../../db/dialects/postgres/connection.ts';
import { assertFence } from '../../db/leader-fence.ts';
import type { Database as Schema } from '../../db/schema.ts';
import type { MessageOwner, OutgoingMessage, Urgency } from '../messages.ts';
import { applyOwnerKysely, ownerJson, parseOwner } from './owners.ts';
import {
  type NewOutboxRow,
  type OutboxBatch,
  type OutboxRawRow,
  type OutboxReplace,
  type OutboxRow,
  type OutboxStorePort,
  type RecentCall,
  toRow,
} from './store-port.ts';

type Db = Kysely<Schema>;
type Changes = UpdateObject<Schema, 'outbox'>;

const raw = (r: unknown): OutboxRow => toRow(r as OutboxRawRow);

/** The outbox table of bridge.db on Postgres. */
export class PostgresOutboxStore implements OutboxStorePort {
  readonly #db: Db;
  readonly #now: () => number;
  readonly #onOwnerError: ((err: unknown) => void) | undefined;
  readonly #fence: number | undefined;

  /**
   * Uses `db`'s pool (closed by its owner, not by this store). With `fence` (this leader's
   * token) every write throws FencedError and lands nothing once a newer leader claimed.
   */
  constructor(
    db: PostgresDb,
    now: () => number = Date.now,
    onOwnerError?: (err: unknown) => void,
    fence?: number,
  ) {
    this.#db = db.kysely;
    this.#now = now;
    this.#onOwnerError = onOwnerError;
    this.#fence = fence;
  }

  /** One transaction, the fencing token checked first when there is one. */
  #tx<T>(fn: (tx: Db) => Promise<T>): Promise<T> {
    return this.#db.transaction().execute(async (tx) => {
      if (this.#fence !== undefined) await assertFence(tx, this.#fence);
      return fn(tx);
    });
  }

  async writeBatch(
    inserts: readonly NewOutboxRow[],
    replaces: readonly OutboxReplace[],
  ): Promise<OutboxBatch> {
    return this.#tx(async (tx) => {
      const found: (OutboxRow | undefined)[] = [];
      for (const row of inserts) found.push(await this.#keyed(tx, row));
      const ids: number[] = [];
      for (const [i, row] of inserts.entries())
        ids.push(found[i]?.id ?? (await this.#insert(tx, row)));
      const replaced: (number | null)[] = [];
      for (const r of replaces) {
        const done = await this.#replace(tx, r.id, r.row.message, r.urgency);
        replaced.push(done ? null : await this.#insert(tx, r.row));
      }
      return { ids, replaced, found };
    });
  }

  async #insert(tx: Db, row: NewOutboxRow): Promise<number> {
    const at = this.#now();
    const inserted = await tx
      .insertInto('outbox')
      .values({
        platform: row.platform,
        lane: row.lane,
        kind: row.kind,
        target: row.target,
        payload_json: JSON.stringify(row.message),
        urgency: row.urgency,
        state: 'pending',
        created_at: at,
        updated_at: at,
        owner_json: ownerJson(row.message.owner),
        dedupe_key: row.kind === 'send' ? (row.message.key ?? null) : null,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return inserted.id;
  }

  /** As OutboxStore's: the keyed send already queued or delivered, or undefined. */
  async #keyed(tx: Db, row: NewOutboxRow): Promise<OutboxRow | undefined> {
    const key = row.message.key;
    if (row.kind !== 'send' || key === undefined) return undefined;
    const found = await tx
      .selectFrom('outbox')
      .selectAll()
      .where('platform', '=', row.platform)
      .where('target', '=', row.target)
      .where('dedupe_key', '=', key)
      .executeTakeFirst();
    if (found === undefined) return undefined;
    if (found.state !== 'failed') return raw(found);
    await tx.updateTable('outbox').set({ dedupe_key: null }).where('id', '=', found.id).execute();
    return undefined;
  }

  async #replace(tx: Db, id: number, message: OutgoingMessage, urgency: Urgency): Promise<boolean> {
    const owner = ownerJson(message.owner);
    const res = await tx
      .updateTable('outbox')
      .set((eb) => ({
        payload_json: JSON.stringify(message),
        urgency,
        owner_json: owner === null ? eb.ref('owner_json') : owner,
        updated_at: this.#now(),
      }))
      .where('id', '=', id)
      .where('state', '=', 'pending')
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  async attempted(id: number): Promise<void> {
    await this.#set(id, { state: 'attempted', attempts: sql<number>`attempts + 1` });
  }

  async confirmed(id: number, ref: string | null): Promise<void> {
    await this.#tx(async (tx) => {
      await this.#set(id, { state: 'confirmed', result_ref: ref }, tx);
      const row = await tx
        .selectFrom('outbox')
        .select('owner_json')
        .where('id', '=', id)
        .executeTakeFirst();
      const owner = parseOwner(row?.owner_json ?? null);
      if (owner === null) return;
      // A savepoint: an owner that cannot take the result never undoes the confirmation (a
      // failed statement aborts a Postgres transaction unless rolled back to one).
      await sql`savepoint owner`.execute(tx);
      try {
        await applyOwnerKysely(tx, owner, ref, this.#now());
        await sql`release savepoint owner`.execute(tx);
      } catch (err) {
        await sql`rollback to savepoint owner`.execute(tx);
        this.#onOwnerError?.(err);
      }
    });
  }

  async retryAt(id: number, notBefore: number): Promise<void> {
    await this.#set(id, { state: 'pending', not_before: notBefore });
  }

  async retarget(id: number, target: string, lane: string): Promise<void> {
    await this.#set(id, { state: 'pending', target, lane });
  }

  async failed(id: number, code: string, message: string): Promise<void> {
    await this.#set(id, { state: 'failed', error_code: code, error: message });
  }

  async open(platform: string): Promise<OutboxRow[]> {
    const rows = await this.#db
      .selectFrom('outbox')
      .selectAll()
      .where('platform', '=', platform)
      .where('state', 'in', ['pending', 'attempted'])
      .orderBy('id')
      .execute();
    return rows.map(raw);
  }

  async recent(platform: string, since: number): Promise<RecentCall[]> {
    return this.#db
      .selectFrom('outbox')
      .select(['lane', 'kind', 'state', 'updated_at as at'])
      .where('platform', '=', platform)
      .where('state', 'in', ['attempted', 'confirmed', 'failed'])
      .where('updated_at', '>=', since)
      .execute();
  }

  async knownRefs(platform: string, lane: string): Promise<string[]> {
    const like = `${lane}%`;
    const { rows } = await sql<{ ref: string }>`
      select result_ref as ref from outbox where platform = ${platform} and lane = ${lane} and result_ref is not null
      union select target from outbox where platform = ${platform} and lane = ${lane} and kind = 'edit'
      union select message_ref from checkpoint_messages where message_ref like ${like}
      union select message_ref from session_offers where message_ref like ${like}
      union select message_ref from status_messages where message_ref like ${like}`.execute(
      this.#db,
    );
    return rows.map((r) => r.ref);
  }

  async openFor(owner: MessageOwner): Promise<boolean> {
    const row = await this.#db
      .selectFrom('outbox')
      .select('id')
      .where('owner_json', '=', ownerJson(owner))
      .where('state', 'in', ['pending', 'attempted'])
      .executeTakeFirst();
    return row !== undefined;
  }

  async get(id: number): Promise<OutboxRow | undefined> {
    const row = await this.#db
      .selectFrom('outbox')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row && raw(row);
  }

  async prune(before: number): Promise<number> {
    const res = await this.#db
      .deleteFrom('outbox')
      .where('state', 'in', ['confirmed', 'failed'])
      .where('updated_at', '<', before)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }

  /** The pool belongs to bridge.db's owner: nothing to close here. */
  close(): void {}

  async #set(id: number, changes: Changes, tx?: Db): Promise<void> {
    const write = (db: Db) =>
      db
        .updateTable('outbox')
        .set({ ...changes, updated_at: this.#now() })
        .where('id', '=', id)
        .execute();
    // Unfenced, one statement is its own transaction; fenced, the check goes in with it.
    if (tx !== undefined || this.#fence === undefined) await write(tx ?? this.#db);
    else await this.#tx(write);
  }
}
