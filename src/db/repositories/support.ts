/** Small helpers shared by the repositories: the clock and JSON columns. */
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import { CorruptStateError } from '../../errors.ts';
import { type BridgeDialect, dialectOf } from '../dialects/index.ts';
import type { Database } from '../schema.ts';

/** Returns the current time in ms since the epoch; injected so tests control time. */
export type Clock = () => number;

/** Options every repository takes. */
export interface RepoOptions {
  /** Time source for *_at columns (default Date.now). */
  now?: Clock;
}

/** Parses a *_json column; a value that is not valid JSON means bridge.db was damaged. */
export function parseJsonColumn<T>(text: string, where: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new CorruptStateError(`bridge.db: ${where} is not valid JSON`, { cause: err });
  }
}

/** Quotes a user-given name for messages: agent 'x'. */
export function quoted(value: string | number): string {
  return `'${String(value)}'`;
}

/**
 * Matches a stored message ref against the ref of one message part. Adapters store a split
 * message as `<chat>/<id>,<id>…`, and a reply names one part (`<chat>/<id>`): the column equals
 * the ref, or has the same `<chat>/` and lists the id among its parts.
 */
export function isMessageOrPart(
  dialect: BridgeDialect,
  column: 'message_ref',
  messageRef: string,
): RawBuilder<SqlBool> {
  const slash = messageRef.lastIndexOf('/');
  const prefix = messageRef.slice(0, slash + 1);
  const part = messageRef.slice(slash + 1);
  const col = sql.ref(column);
  if (slash < 0 || part === '' || part.includes(',')) return sql<SqlBool>`${col} = ${messageRef}`;
  const parts = sql`',' || substr(${col}, ${prefix.length + 1}) || ','`;
  return sql<SqlBool>`(${col} = ${messageRef} or (substr(${col}, 1, ${prefix.length}) = ${prefix}
    and ${dialect.position(parts, sql`${`,${part},`}`)} > 0))`;
}

/**
 * Whether the outbox still holds a send owned by `{kind, id}` (waiting or in flight): the
 * owner's message ref will come with its confirmation (outbox owners.ts).
 */
export async function sendInFlightFor(
  db: Kysely<Database>,
  kind: 'checkpoint' | 'offer',
  id: number,
): Promise<boolean> {
  const row = await ownedCalls(db, kind, id)
    .where('state', 'in', ['pending', 'attempted'])
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Whether the outbox handed a send owned by `{kind, id}` to the platform more than once (a
 * restart resending an unanswered call): the platform may hold two messages of it.
 */
export async function sendAttemptedTwice(
  db: Kysely<Database>,
  kind: 'checkpoint' | 'offer',
  id: number,
): Promise<boolean> {
  const row = await ownedCalls(db, kind, id)
    .where('kind', '=', 'send')
    .where('attempts', '>', 1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The outbox calls owned by `{kind, id}` (their ids). */
function ownedCalls(db: Kysely<Database>, kind: 'checkpoint' | 'offer', id: number) {
  const { jsonText, asText } = dialectOf(db);
  const owner = sql.ref('owner_json');
  return db
    .selectFrom('outbox')
    .select('id')
    .where(sql<boolean>`${jsonText(owner, 'kind')} = ${sql.lit(kind)}`)
    .where(sql<boolean>`${jsonText(owner, 'id')} = ${asText(sql`${id}`)}`);
}
