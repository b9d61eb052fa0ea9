/**
 * `channel_state`: a small key/value store per platform, with optional expiry, for what a chat
 * adapter keeps across a restart. Adapters get one platform's slice (`scope`) as a plain object
 * and never see the database.
 */
import { type Kysely, sql } from 'kysely';
import type { Database } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** One live entry. */
export interface ChannelStateEntry {
  key: string;
  value: string;
}

/** One platform's slice of the store (the shape adapters take as their `state` option). */
export interface ChannelStateScope {
  /** Always true: what is stored here outlives the process. */
  readonly durable: true;
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<ChannelStateEntry[]>;
}

/** Reads and writes `channel_state`. */
export class ChannelStateRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** The slice of one platform. */
  scope(platform: string): ChannelStateScope {
    return {
      durable: true,
      get: (key) => this.get(platform, key),
      set: (key, value, ttlMs) => this.set(platform, key, value, ttlMs),
      delete: (key) => this.delete(platform, key),
      list: (prefix) => this.list(platform, prefix),
    };
  }

  /** The live value of a key, or undefined (missing or expired). */
  async get(platform: string, key: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('channel_state')
      .select('value')
      .where('platform', '=', platform)
      .where('key', '=', key)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', this.#now())]))
      .executeTakeFirst();
    return row?.value;
  }

  /** Stores a value; with `ttlMs` it is forgotten after that long. Expired entries are swept. */
  async set(platform: string, key: string, value: string, ttlMs?: number): Promise<void> {
    const now = this.#now();
    const expires = ttlMs === undefined ? null : now + ttlMs;
    await this.#db
      .insertInto('channel_state')
      .values({ platform, key, value, expires_at: expires, updated_at: now })
      .onConflict((oc) =>
        oc
          .columns(['platform', 'key'])
          .doUpdateSet({ value, expires_at: expires, updated_at: now }),
      )
      .execute();
    if (expires !== null) await this.deleteExpired(now);
  }

  /** Removes a key (nothing happens when it is missing). */
  async delete(platform: string, key: string): Promise<void> {
    await this.#db
      .deleteFrom('channel_state')
      .where('platform', '=', platform)
      .where('key', '=', key)
      .execute();
  }

  /** Live entries of a platform whose key starts with `prefix`, ordered by key. */
  async list(platform: string, prefix: string): Promise<ChannelStateEntry[]> {
    // substr instead of LIKE: a key may contain % or _.
    return this.#db
      .selectFrom('channel_state')
      .select(['key', 'value'])
      .where('platform', '=', platform)
      .where(sql<string>`substr(key, 1, ${[...prefix].length})`, '=', prefix)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', this.#now())]))
      .orderBy('key')
      .execute();
  }

  /** Deletes every entry expired at `now`; returns how many. */
  async deleteExpired(now: number): Promise<number> {
    const res = await this.#db
      .deleteFrom('channel_state')
      .where('expires_at', '<=', now)
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
