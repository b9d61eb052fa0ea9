/**
 * 0044_person_links (issue 36): identities linked as one person across platforms. `persons` names
 * each person (the name of the identity that asked for the link); `person_links` puts an identity
 * (an actor id: `telegram:42`, `slack:U1`, `cli:alice`) in at most one person; `link_codes` holds
 * the one-time codes of `/link` (hashed, short-lived, claimed once, then confirmed by the issuer).
 * Roles are not here: they stay per chat and per identity in `allowlist`.
 */
import type { Kysely } from 'kysely';

/** Creates `persons`, `person_links` and `link_codes`. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('persons')
    .addColumn('person_id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('person_links')
    .addColumn('actor_id', 'text', (c) => c.primaryKey())
    .addColumn('person_id', 'text', (c) =>
      c.notNull().references('persons.person_id').onDelete('cascade'),
    )
    .addColumn('linked_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('person_links_by_person')
    .on('person_links')
    .column('person_id')
    .execute();
  await db.schema
    .createTable('link_codes')
    .addColumn('code_hash', 'text', (c) => c.primaryKey())
    .addColumn('issuer_id', 'text', (c) => c.notNull())
    .addColumn('issuer_name', 'text')
    .addColumn('issuer_chat', 'text')
    .addColumn('expires_at', 'integer', (c) => c.notNull())
    .addColumn('claimant_id', 'text')
    .addColumn('claimant_name', 'text')
    .addColumn('claimant_chat', 'text')
    .addColumn('used_at', 'integer')
    .addColumn('created_at', 'integer', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('link_codes_by_issuer')
    .on('link_codes')
    .column('issuer_id')
    .execute();
}

/** Drops what `up` created. */
export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('link_codes').ifExists().execute();
  await db.schema.dropTable('person_links').ifExists().execute();
  await db.schema.dropTable('persons').ifExists().execute();
}
