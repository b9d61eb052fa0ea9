/**
 * Where bridge.db is opened: the embedded SQLite file (the default; its connection lives in
 * dialects/sqlite/) and the migrator. Postgres is opened by dialects/postgres/connection.ts, or
 * by `openConfiguredDb` (open.ts) as the config selects.
 */
export {
  type BridgeDb,
  BUSY_TIMEOUT_MS,
  openBridgeDb,
} from './dialects/sqlite/connection.ts';
export { migrateToLatest, migrationStatus } from './migrator.ts';
export { mapSqliteError } from './sqlite-errors.ts';
