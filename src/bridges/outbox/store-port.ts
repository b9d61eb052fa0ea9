/**
 * What the Outbox asks of its table, on either dialect: `OutboxStore` (store.ts, SQLite on a
 * connection of its own, synchronous) or `PostgresOutboxStore` (store-postgres.ts, answers
 * later). A synchronous answer is used at once, so the SQLite outbox behaves as it always did.
 */
import type { OutboxState } from '../../db/schema.ts';
import type { MessageOwner, OutgoingMessage, Urgency } from '../messages.ts';
import type { OutboxKind } from './limits.ts';
import { parseOwner } from './owners.ts';

/** A result now (SQLite) or later (Postgres). */
export type Maybe<T> = T | Promise<T>;

/** One outbox row. */
export interface OutboxRow {
  readonly id: number;
  readonly platform: string;
  readonly lane: string;
  readonly kind: OutboxKind;
  /** Chat ref of a send, message ref of an edit. */
  readonly target: string;
  readonly message: OutgoingMessage;
  readonly urgency: Urgency;
  readonly state: OutboxState;
  readonly attempts: number;
  readonly notBefore: number;
  readonly resultRef: string | null;
  readonly errorCode: string | null;
  /** The row that asked for the call (told the result when it is confirmed), if any. */
  readonly owner: MessageOwner | null;
}

/** What a new row holds. */
export interface NewOutboxRow {
  readonly platform: string;
  readonly lane: string;
  readonly kind: OutboxKind;
  readonly target: string;
  readonly message: OutgoingMessage;
  readonly urgency: Urgency;
}

/** An outbox row as the table holds it. */
export interface OutboxRawRow {
  id: number;
  platform: string;
  lane: string;
  kind: OutboxKind;
  target: string;
  payload_json: string;
  urgency: Urgency;
  state: OutboxState;
  attempts: number;
  not_before: number;
  result_ref: string | null;
  error_code: string | null;
  owner_json: string | null;
}

/** The row the Outbox works with, from the table's. */
export const toRow = (r: OutboxRawRow): OutboxRow => ({
  id: r.id,
  platform: r.platform,
  lane: r.lane,
  kind: r.kind,
  target: r.target,
  message: JSON.parse(r.payload_json) as OutgoingMessage,
  urgency: r.urgency,
  state: r.state,
  attempts: r.attempts,
  notBefore: r.not_before,
  resultRef: r.result_ref,
  errorCode: r.error_code,
  owner: parseOwner(r.owner_json),
});

/** A replacement of a pending edit in a group commit. */
export interface OutboxReplace {
  id: number;
  urgency: Urgency;
  row: NewOutboxRow;
}

/** What a group commit wrote (see `OutboxStorePort.writeBatch`). */
export interface OutboxBatch {
  ids: number[];
  replaced: (number | null)[];
  found: (OutboxRow | undefined)[];
}

/** A row's lane, kind and last change, for pacing after a restart. */
export interface RecentCall {
  lane: string;
  kind: OutboxKind;
  state: OutboxState;
  at: number;
}

/** The outbox table, as the Outbox uses it (each method is documented on `OutboxStore`). */
export interface OutboxStorePort {
  writeBatch(
    inserts: readonly NewOutboxRow[],
    replaces: readonly OutboxReplace[],
  ): Maybe<OutboxBatch>;
  attempted(id: number): Maybe<void>;
  confirmed(id: number, ref: string | null): Maybe<void>;
  retryAt(id: number, notBefore: number): Maybe<void>;
  retarget(id: number, target: string, lane: string): Maybe<void>;
  failed(id: number, code: string, message: string): Maybe<void>;
  open(platform: string): Maybe<OutboxRow[]>;
  recent(platform: string, since: number): Maybe<RecentCall[]>;
  knownRefs(platform: string, lane: string): Maybe<string[]>;
  openFor(owner: MessageOwner): Maybe<boolean>;
  get(id: number): Maybe<OutboxRow | undefined>;
  prune(before: number): Maybe<number>;
  close(): Maybe<void>;
}

/**
 * Store writes in order: at once when the store answers synchronously and nothing is pending
 * (SQLite: exactly the old behaviour), else after the writes before them (Postgres: a row's
 * `attempted` never lands after its `confirmed`).
 */
export class WriteChain {
  #tail: Promise<unknown> | undefined;

  /** Runs `op` in turn; its answer, now or later. */
  run<T>(op: () => Maybe<T>): Maybe<T> {
    const result = this.#tail === undefined ? op() : this.#tail.then(op);
    if (!(result instanceof Promise)) return result;
    const tail: Promise<unknown> = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tail = tail;
    void tail.then(() => {
      if (this.#tail === tail) this.#tail = undefined;
    });
    return result;
  }

  /** Resolves once every write started so far has settled. */
  async settled(): Promise<void> {
    while (this.#tail !== undefined) await this.#tail;
  }
}
