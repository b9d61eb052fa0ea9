/**
 * Brings bridge.db to the latest schema with kysely's Migrator, all pending migrations in ONE
 * write transaction (SQLite: BEGIN IMMEDIATE; Postgres: kysely's transaction and advisory lock):
 * a failure leaves the database as it was, and two processes starting together (serve + worker)
 * take turns instead of both creating the same tables.
 */
import { type Migration, Migrator, sql } from 'kysely';
import { MIGRATIONS, migrationProvider } from '../../migrations/index.ts';
import { CorruptStateError } from '../errors.ts';
import type { PostgresDb } from './dialects/postgres/connection.ts';
import type { BridgeDb } from './dialects/sqlite/connection.ts';
import {
  appliedMigrations,
  byName,
  MIGRATION_TABLE,
  schemaVersion,
  upToDate,
} from './migration-check.ts';

/** bridge.db on either dialect. */
export type AnyBridgeDb = BridgeDb | PostgresDb;

/** Options for tests and tools; production code passes none. */
export interface MigrateOptions {
  /** The migrations to apply (default: every migration of this build, `migrations/index.ts`). */
  migrations?: Readonly<Record<string, Migration>>;
}

/** One migration and when it was applied (ISO time); `unknown` marks one from a newer build. */
export interface MigrationState {
  name: string;
  appliedAt?: string;
  unknown?: true;
}

/**
 * Applies every pending migration and returns their names (empty when up to date).
 * Throws CorruptStateError when the database was written by a newer phasebridge (it holds a
 * migration this build does not know) or when a migration fails (nothing is applied then).
 * Call it before anything else uses `db`: statements issued meanwhile join its transaction.
 */
export async function migrateToLatest(
  db: AnyBridgeDb,
  opts: MigrateOptions = {},
): Promise<{ applied: string[] }> {
  const migrations = opts.migrations ?? MIGRATIONS;
  if (db.dialect === 'postgres') return migratePostgres(db, migrations);
  refuseNewerSchema(db, migrations);
  // The common case (every CLI command): nothing to do, seen with one read and no write lock.
  if (upToDate(appliedMigrations(db.sqlite), Object.keys(migrations))) return { applied: [] };
  // SQLite's DDL is transactional even though kysely's SQLite adapter does not say so.
  db.sqlite.exec('BEGIN IMMEDIATE');
  try {
    refuseNewerDatabase(appliedMigrations(db.sqlite), migrations, describe(db));
    const applied = await runMigrator(db, migrations);
    const known = Object.keys(migrations).length;
    if (schemaVersion(db.sqlite) < known) {
      db.sqlite.pragma(`user_version = ${known}`);
    }
    db.sqlite.exec('COMMIT');
    return { applied };
  } finally {
    if (db.sqlite.inTransaction) db.sqlite.exec('ROLLBACK');
  }
}

/**
 * Postgres: kysely's Migrator takes an advisory lock and runs every pending migration in one
 * transaction itself (Postgres's DDL is transactional). There is no user_version: a database from
 * a newer phasebridge is known by a migration name this build lacks.
 */
async function migratePostgres(
  db: PostgresDb,
  migrations: Readonly<Record<string, Migration>>,
): Promise<{ applied: string[] }> {
  const applied = await appliedPostgresMigrations(db);
  if (upToDate(applied, Object.keys(migrations))) return { applied: [] };
  refuseNewerDatabase(applied, migrations, describe(db));
  return { applied: await runMigrator(db, migrations) };
}

/** Runs kysely's Migrator; a failure is a CorruptStateError naming the migration. */
async function runMigrator(
  db: AnyBridgeDb,
  migrations: Readonly<Record<string, Migration>>,
): Promise<string[]> {
  const migrator = new Migrator({
    db: db.kysely,
    provider: migrationProvider(migrations),
    nameComparator: byName,
  });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results.find((r) => r.status === 'Error')?.migrationName;
    const message = error instanceof Error ? error.message : String(error);
    throw new CorruptStateError(
      `${describe(db)}: ${failed ? `migration ${failed} failed` : 'cannot migrate'}: ${message}; nothing was applied`,
      { cause: error },
    );
  }
  return results.filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Where this bridge.db lives, for messages (a Postgres URL without its password). */
function describe(db: AnyBridgeDb): string {
  return db.dialect === 'postgres' ? `bridge.db on ${db.where}` : `bridge.db at ${db.file}`;
}

/**
 * Every migration this build knows, in order, with `appliedAt` when applied; then any applied
 * migration it does not know (`unknown: true`: the database is from a newer phasebridge).
 * Reads only: a fresh database is left untouched.
 */
export async function migrationStatus(
  db: AnyBridgeDb,
  opts: MigrateOptions = {},
): Promise<MigrationState[]> {
  const known = Object.keys(opts.migrations ?? MIGRATIONS).sort();
  const applied =
    db.dialect === 'postgres' ? await appliedPostgresMigrations(db) : appliedMigrations(db.sqlite);
  const states: MigrationState[] = known.map((name) => {
    const appliedAt = applied.get(name);
    return appliedAt === undefined ? { name } : { name, appliedAt };
  });
  for (const [name, appliedAt] of [...applied].sort(([a], [b]) => a.localeCompare(b))) {
    if (!known.includes(name)) states.push({ name, appliedAt, unknown: true });
  }
  return states;
}

/**
 * Refuses a bridge.db whose `user_version` (the schema number: how many migrations made it) is
 * above this build's: its tables may mean something this version would misread.
 */
function refuseNewerSchema(db: BridgeDb, migrations: Readonly<Record<string, Migration>>): void {
  const schema = schemaVersion(db.sqlite);
  const known = Object.keys(migrations).length;
  if (schema <= known) return;
  throw new CorruptStateError(
    `bridge.db at ${db.file} was written by a newer phasebridge (schema ${schema}, this one knows ${known}): upgrade, or start from a backup`,
  );
}

/** Throws when the database holds a migration this build does not know. */
function refuseNewerDatabase(
  applied: ReadonlyMap<string, string>,
  migrations: Readonly<Record<string, Migration>>,
  where: string,
): void {
  const unknown = [...applied.keys()].filter((name) => !(name in migrations)).sort();
  if (unknown.length === 0) return;
  throw new CorruptStateError(
    `${where} was written by a newer phasebridge (migration ${unknown.join(', ')} ` +
      'unknown to this version); upgrade phasebridge or point PHASEBRIDGE_HOME elsewhere',
  );
}

/** Applied migration names → ISO timestamps on Postgres (empty when never migrated). */
async function appliedPostgresMigrations(db: PostgresDb): Promise<Map<string, string>> {
  const exists = await sql<{
    found: string | null;
  }>`select to_regclass(${MIGRATION_TABLE}) as found`
    .execute(db.kysely)
    .then((r) => r.rows[0]?.found);
  if (exists == null) return new Map();
  const rows = await sql<{
    name: string;
    timestamp: string;
  }>`select name, timestamp from ${sql.table(MIGRATION_TABLE)}`
    .execute(db.kysely)
    .then((r) => r.rows);
  return new Map(rows.map((r) => [r.name, r.timestamp]));
}
