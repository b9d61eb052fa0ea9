/** The outbox store for a bridge.db: SQLite's on a connection of its own, or the Postgres twin. */
import type { AnyBridgeDb } from '../../db/migrator.ts';
import { OutboxStore } from './store.ts';
import type { OutboxStorePort } from './store-port.ts';

/**
 * Opens the outbox table of `db`: on SQLite its own fsyncing connection to the same file
 * (store.ts says why), on Postgres the pool of `db` (store-postgres.ts, loaded only then), its
 * writes checked against the leader's fencing token `fence` when given.
 */
export async function outboxStoreOf(
  db: AnyBridgeDb,
  now: () => number = Date.now,
  onOwnerError?: (err: unknown) => void,
  fence?: number,
): Promise<OutboxStorePort> {
  if (db.dialect === 'sqlite') return OutboxStore.open(db.file, now, onOwnerError);
  const { PostgresOutboxStore } = await import('./store-postgres.ts');
  return new PostgresOutboxStore(db, now, onOwnerError, fence);
}
