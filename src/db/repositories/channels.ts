/** Configured chat platform connections (one row per channel id, e.g. 'telegram'). */
import type { Kysely } from 'kysely';
import type { Database, Row } from '../schema.ts';
import { type Clock, parseJsonColumn, type RepoOptions } from './support.ts';

/** One channel; `config` holds non-secret settings only (secrets come from env). */
export interface ChannelRecord {
  id: string;
  platform: string;
  displayName: string | null;
  config: Record<string, unknown>;
  createdAt: number;
}

/** What `upsert` writes. */
export interface ChannelInput {
  id: string;
  platform: string;
  displayName?: string | null;
  config?: Record<string, unknown>;
}

/** Reads and writes `channels`. */
export class ChannelsRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Inserts the channel or replaces its platform, name and config (createdAt is kept). */
  async upsert(channel: ChannelInput): Promise<ChannelRecord> {
    const row = await this.#db
      .insertInto('channels')
      .values({
        id: channel.id,
        platform: channel.platform,
        display_name: channel.displayName ?? null,
        config_json: JSON.stringify(channel.config ?? {}),
        created_at: this.#now(),
      })
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          platform: eb.ref('excluded.platform'),
          display_name: eb.ref('excluded.display_name'),
          config_json: eb.ref('excluded.config_json'),
        })),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** The channel with this id, or null. */
  async get(id: string): Promise<ChannelRecord | null> {
    const row = await this.#db
      .selectFrom('channels')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Every channel, by id. */
  async list(): Promise<ChannelRecord[]> {
    const rows = await this.#db.selectFrom('channels').selectAll().orderBy('id').execute();
    return rows.map(toRecord);
  }
}

function toRecord(row: Row<'channels'>): ChannelRecord {
  return {
    id: row.id,
    platform: row.platform,
    displayName: row.display_name,
    config: parseJsonColumn(row.config_json, `config_json of channel '${row.id}'`),
    createdAt: row.created_at,
  };
}
