/** SQLite (better-sqlite3), the embedded default: SQL as the migrations and repositories write it. */
import { type DialectAdapter, SqliteAdapter, sql } from 'kysely';
import { sqliteCode } from '../../sqlite-code.ts';
import type { BridgeDialect, ConstraintFailure } from '../types.ts';

export { sqliteCode };

function constraintOf(err: unknown): ConstraintFailure | undefined {
  const code = sqliteCode(err);
  const detail = () => (err as Error).message.replace(/^.*constraint failed: /i, '');
  switch (code) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return { kind: 'unique', detail: detail() };
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return { kind: 'foreignKey', detail: detail() };
    case 'SQLITE_CONSTRAINT_CHECK':
    case 'SQLITE_CONSTRAINT_NOTNULL':
    case 'SQLITE_CONSTRAINT_DATATYPE':
      return { kind: 'invalid', detail: detail() };
    default:
      return undefined;
  }
}

/** The SQLite dialect. */
export const sqliteDialect: BridgeDialect = {
  name: 'sqlite',
  owns: (adapter: DialectAdapter) => adapter instanceof SqliteAdapter,
  constraintOf,
  jsonText: (column, key) => sql<string | null>`json_extract(${column}, ${`$.${key}`})`,
  position: (haystack, needle) => sql<number>`instr(${haystack}, ${needle})`,
  asText: (value) => value as never,
  unindexed: (column) => sql`+${sql.ref(column)}`,
  likeIgnoringCase: 'like',
  plugins: [],
};
