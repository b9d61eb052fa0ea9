/**
 * The name each person was last seen under (`people`): every chat action remembers its actor, so
 * a decision stored with an id only is shown with the name the person goes by (issue 29).
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** An identity as people know it; `person` is the linked person's id (issue 36), when linked. */
export interface KnownPerson {
  id: string;
  name?: string;
  person?: string;
}

/** Reads and writes `people`. */
export class PeopleRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** Remembers the name a person goes by now (nothing to do without one, or when unchanged). */
  async remember(person: { id: string; name?: string }): Promise<void> {
    const name = person.name?.trim();
    if (!name || name === person.id) return;
    // Read first: every chat event remembers its sender, and a read takes no write lock.
    const known = await this.#db
      .selectFrom('people')
      .select('name')
      .where('actor_id', '=', person.id)
      .executeTakeFirst();
    if (known?.name === name) return;
    await this.#db
      .insertInto('people')
      .values({ actor_id: person.id, name, updated_at: this.#now() })
      .onConflict((oc) =>
        oc
          .column('actor_id')
          .doUpdateSet({ name, updated_at: this.#now() })
          .where('people.name', '<>', name),
      )
      .execute();
  }

  /**
   * The people with these ids, named when known (unknown ids come back without a name); a linked
   * identity has its person's name.
   */
  async lookup(ids: readonly string[]): Promise<Map<string, KnownPerson>> {
    const unique = [...new Set(ids)];
    const out = new Map(unique.map((id) => [id, { id } as KnownPerson]));
    if (unique.length === 0) return out;
    const rows = await this.#db
      .selectFrom('people')
      .select(['actor_id', 'name'])
      .where('actor_id', 'in', unique)
      .execute();
    for (const r of rows) out.set(r.actor_id, { id: r.actor_id, name: r.name });
    // An identity linked to a person is named as that person, on every platform (issue 36).
    const linked = await this.#db
      .selectFrom('person_links')
      .innerJoin('persons', 'persons.person_id', 'person_links.person_id')
      .select(['person_links.actor_id', 'persons.name', 'persons.person_id'])
      .where('person_links.actor_id', 'in', unique)
      .execute();
    for (const r of linked)
      out.set(r.actor_id, { id: r.actor_id, name: r.name, person: r.person_id });
    return out;
  }

  /** The name an identity was last seen under on its own platform (not its person's). */
  async platformName(id: string): Promise<string | undefined> {
    const row = await this.#db
      .selectFrom('people')
      .select('name')
      .where('actor_id', '=', id)
      .executeTakeFirst();
    return row?.name;
  }

  /** One person by id, named when known. */
  async person(id: string): Promise<KnownPerson> {
    return (await this.lookup([id])).get(id) ?? { id };
  }
}
