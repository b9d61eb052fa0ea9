/**
 * The SQLite error code of an error, with no other import: fs-errors.ts (which every CLI command
 * loads, `--help` included) names SQLite's errors without loading Kysely and the dialects.
 */

/** The better-sqlite3 `code` of a SqliteError (e.g. 'SQLITE_CONSTRAINT_UNIQUE'), else undefined. */
export function sqliteCode(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}
