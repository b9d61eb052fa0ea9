/**
 * The outbox's rows in bridge.db, on a connection of its own: better-sqlite3 statements commit
 * when they return, and with `synchronous = FULL` a row is on disk before the call it describes
 * is attempted. (bridge.db's shared connection may be inside a kysely transaction across an
 * await, which would hold a raw write back until that transaction commits.)
 */
import Database from 'better-sqlite3';
import { BUSY_TIMEOUT_MS } from '../../db/connection.ts';
import { sqliteStorageError } from '../../fs-errors.ts';
import { nativeBindingOption } from '../../sqlite-addon.ts';
import type { MessageOwner, OutgoingMessage, Urgency } from '../messages.ts';
import { applyOwner, ownerJson, parseOwner } from './owners.ts';
import {
  type NewOutboxRow,
  type OutboxBatch,
  type OutboxReplace,
  type OutboxRow,
  type OutboxStorePort,
  type OutboxRawRow as RawRow,
  type RecentCall,
  toRow,
} from './store-port.ts';

export type { NewOutboxRow, OutboxRow } from './store-port.ts';

/** The outbox table of one bridge.db (migration 0008 creates it). */
export class OutboxStore implements OutboxStorePort {
  readonly #db: Database.Database;
  readonly #now: () => number;
  readonly #own: boolean;
  readonly #onOwnerError: ((err: unknown) => void) | undefined;

  /** Opens its own connection to `file` (bridge.db, already migrated). */
  static open(
    file: string,
    now: () => number = Date.now,
    onOwnerError?: (err: unknown) => void,
  ): OutboxStore {
    let db: Database.Database;
    try {
      db = new Database(file, nativeBindingOption());
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.pragma('journal_mode = WAL');
      // Each commit is fsynced: the row is durable before the call it describes starts.
      db.pragma('synchronous = FULL');
    } catch (err) {
      throw sqliteStorageError(err, file) ?? err;
    }
    return new OutboxStore(db, now, true, onOwnerError);
  }

  /** Uses a connection the caller owns (an in-memory bridge.db in tests). */
  static on(db: Database.Database, now: () => number = Date.now): OutboxStore {
    return new OutboxStore(db, now, false);
  }

  private constructor(
    db: Database.Database,
    now: () => number,
    own: boolean,
    onOwnerError?: (err: unknown) => void,
  ) {
    this.#db = db;
    this.#now = now;
    this.#own = own;
    this.#onOwnerError = onOwnerError;
  }

  /** Writes a new pending row (committed when this returns) and gives its id. */
  insert(row: NewOutboxRow): number {
    const at = this.#now();
    const key = row.kind === 'send' ? (row.message.key ?? null) : null;
    const res = this.#db
      .prepare(
        `insert into outbox (platform, lane, kind, target, payload_json, urgency, state, created_at, updated_at, owner_json, dedupe_key)
         values (?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?)`,
      )
      .run(
        row.platform,
        row.lane,
        row.kind,
        row.target,
        JSON.stringify(row.message),
        row.urgency,
        at,
        at,
        ownerJson(row.message.owner),
        key,
      );
    return Number(res.lastInsertRowid);
  }

  /**
   * The send already queued or delivered with `row`'s key to its chat (a restart replaying what
   * it is about), or undefined. A failed one gives its key up, so the send is tried anew.
   */
  #keyed(row: NewOutboxRow): OutboxRow | undefined {
    const key = row.message.key;
    if (row.kind !== 'send' || key === undefined) return undefined;
    const raw = this.#db
      .prepare('select * from outbox where platform = ? and target = ? and dedupe_key = ?')
      .get(row.platform, row.target, key) as RawRow | undefined;
    if (raw === undefined) return undefined;
    if (raw.state !== 'failed') return toRow(raw);
    this.#db.prepare('update outbox set dedupe_key = null where id = ?').run(raw.id);
    return undefined;
  }

  /**
   * Writes a batch in ONE transaction, so one fsync covers all of it (a group commit): new
   * pending rows (their ids come back in order) and replacements of pending edits (null where
   * replaced, the row taking `urgency`, the merged one; a row no longer pending gets a new row
   * instead, with the replacement's own urgency, whose id comes back). Committed, and durable,
   * when this returns.
   */
  writeBatch(inserts: readonly NewOutboxRow[], replaces: readonly OutboxReplace[]): OutboxBatch {
    return this.#db.transaction(() => {
      // A keyed send already queued or sent: its row, not a new one (`found` at its index).
      const found = inserts.map((row) => this.#keyed(row));
      return {
        ids: inserts.map((row, i) => found[i]?.id ?? this.insert(row)),
        replaced: replaces.map((r) =>
          this.replace(r.id, r.row.message, r.urgency) ? null : this.insert(r.row),
        ),
        found,
      };
    })();
  }

  /**
   * Replaces a pending edit's message (coalescing: the latest wins; its owner, if it names one, is
   * told the result); false when it is no longer pending.
   */
  replace(id: number, message: OutgoingMessage, urgency: Urgency): boolean {
    const res = this.#db
      .prepare(
        `update outbox set payload_json = ?, urgency = ?, owner_json = coalesce(?, owner_json), updated_at = ? where id = ? and state = 'pending'`,
      )
      .run(JSON.stringify(message), urgency, ownerJson(message.owner), this.#now(), id);
    return res.changes === 1;
  }

  /**
   * The row is about to be handed to the platform. Not fsynced (only written): losing this mark
   * in a power cut leaves the row pending, and a pending row is delivered just as an attempted
   * one is; the insert before it was fsynced.
   */
  attempted(id: number): void {
    this.#setUnsynced(id, `state = 'attempted', attempts = attempts + 1`);
  }

  /**
   * The platform answered; `ref` is the sent message's ref (for a send). Committed, so a crash
   * of the process never repeats it; not fsynced (an fsync per answer would stall delivery), so
   * a power cut may lose the last moment's marks and those messages are sent again. The row's
   * owner is told the result in the same transaction (owners.ts).
   */
  confirmed(id: number, ref: string | null): void {
    this.#db.pragma('synchronous = NORMAL');
    try {
      this.#db.transaction(() => {
        this.#set(id, `state = 'confirmed', result_ref = ?`, ref);
        const raw = this.#db.prepare('select owner_json from outbox where id = ?').get(id) as
          | { owner_json: string | null }
          | undefined;
        const owner = parseOwner(raw?.owner_json ?? null);
        if (owner === null) return;
        try {
          // A savepoint: an owner that cannot take the result never undoes the confirmation.
          this.#db.transaction(() => applyOwner(this.#db, owner, ref, this.#now()))();
        } catch (err) {
          this.#onOwnerError?.(err);
        }
      })();
    } finally {
      this.#db.pragma('synchronous = FULL');
    }
  }

  /** Back to pending, not before `notBefore` (a rate limit longer than the adapter waits). */
  retryAt(id: number, notBefore: number): void {
    this.#set(id, `state = 'pending', not_before = ?`, notBefore);
  }

  /** The row's chat got a new ref (a migrated Telegram group): pending again, sent there. */
  retarget(id: number, target: string, lane: string): void {
    this.#set(id, `state = 'pending', target = ?, lane = ?`, target, lane);
  }

  /** Given up: a permanent platform error, kept with its code. */
  failed(id: number, code: string, message: string): void {
    this.#setUnsynced(id, `state = 'failed', error_code = ?, error = ?`, code, message);
  }

  /** Rows not yet confirmed or failed, oldest first (what a restart must still deliver). */
  open(platform: string): OutboxRow[] {
    const rows = this.#db
      .prepare(
        `select * from outbox where platform = ? and state in ('pending', 'attempted') order by id`,
      )
      .all(platform) as RawRow[];
    return rows.map(toRow);
  }

  /** Lane, kind and last change of the rows attempted or answered since `since` (for pacing after a restart). */
  recent(platform: string, since: number): RecentCall[] {
    return this.#db
      .prepare(
        `select lane, kind, state, updated_at as at from outbox
         where platform = ? and state in ('attempted', 'confirmed', 'failed') and updated_at >= ?`,
      )
      .all(platform, since) as RecentCall[];
  }

  /**
   * The refs of the messages bridge.db knows in `lane` (sent or edited through the outbox, or
   * kept by a checkpoint copy, session offer or status message), for `Channel.clearRepeats`;
   * the owners' refs are matched by prefix, so a few of another chat's may come with them.
   */
  knownRefs(platform: string, lane: string): string[] {
    const like = `${lane}%`;
    const rows = this.#db
      .prepare(
        `select result_ref as ref from outbox where platform = ? and lane = ? and result_ref is not null
         union select target from outbox where platform = ? and lane = ? and kind = 'edit'
         union select message_ref from checkpoint_messages where message_ref like ?
         union select message_ref from session_offers where message_ref like ?
         union select message_ref from status_messages where message_ref like ?`,
      )
      .all(platform, lane, platform, lane, like, like, like) as { ref: string }[];
    return rows.map((r) => r.ref);
  }

  /** Whether a call owned by `owner` still waits or is in flight (its result will reach it). */
  openFor(owner: MessageOwner): boolean {
    const row = this.#db
      .prepare(`select 1 from outbox where owner_json = ? and state in ('pending', 'attempted')`)
      .get(ownerJson(owner));
    return row !== undefined;
  }

  /** One row by id. */
  get(id: number): OutboxRow | undefined {
    const raw = this.#db.prepare('select * from outbox where id = ?').get(id) as RawRow | undefined;
    return raw && toRow(raw);
  }

  /** Deletes confirmed and failed rows last changed before `before`; returns how many. */
  prune(before: number): number {
    return this.#db
      .prepare(`delete from outbox where state in ('confirmed', 'failed') and updated_at < ?`)
      .run(before).changes;
  }

  /** The connection's `synchronous` setting ('full': every commit is fsynced). */
  get synchronous(): string {
    const level = this.#db.pragma('synchronous', { simple: true }) as number;
    return ['off', 'normal', 'full', 'extra'][level] ?? String(level);
  }

  /** Closes the connection when the store opened it. */
  close(): void {
    if (this.#own && this.#db.open) this.#db.close();
  }

  /** `#set`, committed without an fsync (see the callers for why that is safe). */
  #setUnsynced(id: number, assignments: string, ...values: unknown[]): void {
    this.#db.pragma('synchronous = NORMAL');
    try {
      this.#set(id, assignments, ...values);
    } finally {
      this.#db.pragma('synchronous = FULL');
    }
  }

  #set(id: number, assignments: string, ...values: unknown[]): void {
    this.#db
      .prepare(`update outbox set ${assignments}, updated_at = ? where id = ?`)
      .run(...values, this.#now(), id);
  }
}
