/**
 * Whether an SQLite bridge.db holds exactly a build's migrations, read with better-sqlite3 alone.
 * The migrator (migrator.ts) skips kysely's Migrator with it when there is nothing to apply, and
 * the CLI's fast `status` (src/cli/fast-status.ts) answers only when it holds: one check, so that
 * the fast path never lists runs from a database the full command would migrate or refuse.
 */
import type Database from 'better-sqlite3';

/** kysely's bookkeeping table: one row (name, ISO timestamp) per applied migration. */
export const MIGRATION_TABLE = 'kysely_migration';

/**
 * Order of migration names, which are ASCII `NNNN_what`: a plain comparison, not localeCompare
 * (loading ICU's collator costs every CLI command several milliseconds).
 */
export const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Applied migration names → ISO timestamps (empty when never migrated). */
export function appliedMigrations(sqlite: Database.Database): Map<string, string> {
  const table = sqlite
    .prepare("select 1 from sqlite_master where type = 'table' and name = ?")
    .get(MIGRATION_TABLE);
  if (table === undefined) return new Map();
  const rows = sqlite.prepare(`select name, timestamp from ${MIGRATION_TABLE}`).all() as {
    name: string;
    timestamp: string;
  }[];
  return new Map(rows.map((r) => [r.name, r.timestamp]));
}

/** bridge.db's `user_version`: how many migrations made its schema (0 when never migrated). */
export function schemaVersion(sqlite: Database.Database): number {
  return Number(sqlite.pragma('user_version', { simple: true }));
}

/**
 * Whether every migration named in `known` is applied and nothing else is, in the order kysely's
 * Migrator checks (by time applied, then name): then it would apply nothing and report no error.
 * Anything else (pending, unknown or out of order) is false.
 */
export function upToDate(
  appliedNow: ReadonlyMap<string, string>,
  known: readonly string[],
): boolean {
  const names = [...known].sort(byName);
  const applied = [...appliedNow];
  if (names.length === 0 || applied.length !== names.length) return false;
  applied.sort(([a, at], [b, bt]) =>
    at === bt ? byName(a, b) : new Date(at).getTime() - new Date(bt).getTime(),
  );
  return applied.every(([name], i) => name === names[i]);
}
