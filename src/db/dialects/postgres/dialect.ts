/** Postgres (node-postgres through kysely's PostgresDialect), selected by DATABASE_URL. */
import { type DialectAdapter, PostgresAdapter, sql } from 'kysely';
import type { BridgeDialect, ConstraintFailure } from '../types.ts';
import { PostgresSchemaPlugin } from './schema-translation.ts';

/** The SQLSTATE of a node-postgres DatabaseError (five characters), else undefined. */
export function postgresState(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  // node-postgres errors also carry `severity`; a Node system error has a code like 'ECONNREFUSED'.
  const pgError = typeof (err as { severity?: unknown }).severity === 'string';
  return pgError && typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/** SQLSTATE class 23 (integrity constraint violation) and 22 (bad data) as our kinds. */
const KINDS: Readonly<Record<string, ConstraintFailure['kind']>> = {
  '23505': 'unique',
  '23503': 'foreignKey',
  '23514': 'invalid',
  '23502': 'invalid',
  '22P02': 'invalid',
  '22003': 'invalid',
};

function constraintOf(err: unknown): ConstraintFailure | undefined {
  const state = postgresState(err);
  const kind = state === undefined ? undefined : KINDS[state];
  if (kind === undefined) return undefined;
  const e = err as Error & { constraint?: string; column?: string; table?: string };
  const where = e.constraint ?? (e.table && e.column ? `${e.table}.${e.column}` : undefined);
  return { kind, detail: where ?? e.message };
}

/** The Postgres dialect. */
export const postgresDialect: BridgeDialect = {
  name: 'postgres',
  owns: (adapter: DialectAdapter) => adapter instanceof PostgresAdapter,
  constraintOf,
  jsonText: (column, key) => sql<string | null>`(cast(${column} as jsonb) ->> ${key})`,
  position: (haystack, needle) => sql<number>`strpos(${haystack}, ${needle})`,
  asText: (value) => sql<string>`cast(${value} as text)`,
  unindexed: (column) => sql.ref(column),
  likeIgnoringCase: 'ilike',
  plugins: [new PostgresSchemaPlugin()],
};
