/** bridge.db: the connection, migrations, table types, error mapping and repositories. */
export { type BridgeDb, BUSY_TIMEOUT_MS, openBridgeDb } from './connection.ts';
export {
  type MigrateOptions,
  type MigrationState,
  migrateToLatest,
  migrationStatus,
} from './migrator.ts';
export * from './repositories/index.ts';
export type * from './schema.ts';
export {
  type ConstraintMessages,
  mapSqliteError,
  sqliteCode,
  withConstraintErrors,
} from './sqlite-errors.ts';
