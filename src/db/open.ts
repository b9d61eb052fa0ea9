/** bridge.db as the config selects it: Postgres for DATABASE_URL, else the SQLite file in home. */
import { join } from 'node:path';
import { openBridgeDb } from './dialects/sqlite/connection.ts';
import type { AnyBridgeDb } from './migrator.ts';

/**
 * Opens bridge.db on Postgres when `databaseUrl` is set (`pg` is loaded only then), else the
 * embedded SQLite file `<home>/bridge.db`. Not migrated: call `migrateToLatest` next.
 */
export async function openConfiguredDb(
  config: { readonly home: string; readonly databaseUrl?: string | undefined },
  /** Postgres pool size: 2 for a CLI command; `serve` (feed, outbox, console at once) more. */
  maxConnections = 2,
  /** Postgres: sessions idle inside a transaction this long are ended by the server. */
  idleInTransactionMs?: number,
): Promise<AnyBridgeDb> {
  if (config.databaseUrl === undefined)
    return openBridgeDb({ file: join(config.home, 'bridge.db') });
  const { openPostgresDb } = await import('./dialects/postgres/connection.ts');
  return openPostgresDb({
    url: config.databaseUrl,
    maxConnections,
    ...(idleInTransactionMs !== undefined ? { idleInTransactionMs } : {}),
  });
}
