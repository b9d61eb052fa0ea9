/**
 * `run_changes` and `run_feed` on Postgres, the twin of SQLite's RunFeedRepo (run-feed.ts).
 * Two things differ. Writers are told apart by a random id per process, not the pid: bridges on
 * different machines (or containers, all pid 1) share one database. And identity values are
 * handed out before commit, so a later id could become visible before an earlier one and a
 * poller past it would never see the earlier one: `record` holds a transaction-level advisory
 * lock, so change rows commit in id order.
 */
import { randomInt } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import type { PostgresDb } from '../dialects/postgres/connection.ts';
import { MAX_AGE_MS, type PendingRun, type RunChange, type RunFeedStore } from './run-feed.ts';

/** This process as a writer of change rows (fits the column on both dialects). */
const WRITER_ID = randomInt(1, 2 ** 31 - 1);

/** Advisory lock key serialising change-row writers ("pbfeed" in ASCII, any fixed number would do). */
const FEED_LOCK = 0x706266656564;

/** Reads and writes `run_changes` and `run_feed` on Postgres. */
export class PostgresRunFeedRepo implements RunFeedStore {
  readonly #db: PostgresDb;
  readonly #now: () => number;

  readonly #writer: number;

  /** `writer` tells this store's rows apart (default: this process's id; tests give another). */
  constructor(db: PostgresDb, now: () => number = Date.now, writer: number = WRITER_ID) {
    this.#db = db;
    this.#now = now;
    this.#writer = writer;
  }

  async record(changes: readonly { runId: string; seq: number }[]): Promise<void> {
    if (changes.length === 0) return;
    const at = this.#now();
    await this.#db.kysely.transaction().execute(async (tx) => {
      await sql`select pg_advisory_xact_lock(${FEED_LOCK})`.execute(tx);
      await tx
        .insertInto('run_changes')
        .values(changes.map((c) => ({ run_id: c.runId, seq: c.seq, pid: this.#writer, at })))
        .execute();
    });
  }

  async changesAfter(id: number): Promise<RunChange[]> {
    return this.#db.kysely
      .selectFrom('run_changes')
      .select(['id', 'run_id as runId', 'seq', 'pid'])
      .where('id', '>', id)
      .where('pid', '!=', this.#writer)
      .orderBy('id')
      .limit(1000)
      .execute();
  }

  async latestId(): Promise<number> {
    const row = await this.#db.kysely
      .selectFrom('run_changes')
      .select((eb) => eb.fn.max('id').as('id'))
      .executeTakeFirst();
    return Number(row?.id ?? 0);
  }

  /** The newest change id: an idle poll costs this one index lookup, as SQLite's pragma does. */
  dataVersion(): Promise<number> {
    return this.latestId();
  }

  async pending(): Promise<PendingRun[]> {
    const rows = await this.#db.kysely
      .selectFrom('run_changes as c')
      .leftJoin('run_feed as f', 'f.run_id', 'c.run_id')
      .select((eb) => ['c.run_id as runId', eb.fn.min('c.seq').as('firstSeq'), 'f.seq as cursor'])
      .where((eb) => eb.or([eb('f.seq', 'is', null), eb('c.seq', '>', eb.ref('f.seq'))]))
      .groupBy(['c.run_id', 'f.seq'])
      .execute();
    return rows.map((r) => ({ runId: r.runId, firstSeq: Number(r.firstSeq), cursor: r.cursor }));
  }

  async cursor(runId: string): Promise<number | null> {
    const row = await this.#db.kysely
      .selectFrom('run_feed')
      .select('seq')
      .where('run_id', '=', runId)
      .executeTakeFirst();
    return row?.seq ?? null;
  }

  async setCursor(runId: string, seq: number): Promise<void> {
    await this.#upsert(runId, seq, sql<number>`greatest(run_feed.seq, excluded.seq)`);
  }

  async resetCursor(runId: string, seq: number): Promise<void> {
    await this.#upsert(runId, seq, sql<number>`excluded.seq`);
  }

  async prune(): Promise<void> {
    const cutoff = this.#now() - MAX_AGE_MS;
    await sql`DELETE FROM run_changes WHERE at < ${cutoff} OR seq <= coalesce(
        (SELECT f.seq FROM run_feed f WHERE f.run_id = run_changes.run_id), -1)`.execute(
      this.#db.kysely,
    );
    await sql`DELETE FROM run_feed WHERE updated_at < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM run_changes c WHERE c.run_id = run_feed.run_id)`.execute(
      this.#db.kysely,
    );
  }

  async #upsert(runId: string, seq: number, next: RawBuilder<number>): Promise<void> {
    const at = this.#now();
    await this.#db.kysely
      .insertInto('run_feed')
      .values({ run_id: runId, seq, updated_at: at })
      .onConflict((oc) =>
        oc
          .column('run_id')
          .doUpdateSet({ seq: next, updated_at: (eb) => eb.ref('excluded.updated_at') }),
      )
      .execute();
  }
}
