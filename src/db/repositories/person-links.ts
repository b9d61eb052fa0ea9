/**
 * People across platforms (issue 36): identities linked as one person (`persons`,
 * `person_links`) and the one-time codes that link them (`link_codes`). A code is issued by one
 * identity, claimed once by another before it expires, then confirmed by its issuer; only then
 * are the two one person. Nothing here grants a role: roles stay per chat in `allowlist`.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database, Row } from '../schema.ts';
import type { Clock, RepoOptions } from './support.ts';

/** One person: its id, its name, and its identities (actor ids) in the order they joined. */
export interface LinkedPerson {
  readonly personId: string;
  readonly name: string;
  readonly identities: readonly string[];
}

/** Who issued or claimed a code: the actor, the name it goes by, the chat to tell (none: CLI). */
export interface LinkParty {
  readonly id: string;
  readonly name?: string | undefined;
  readonly chat?: string | undefined;
}

/** Why a code cannot be claimed or confirmed. */
export type LinkCodeProblem = 'unknown' | 'used' | 'expired' | 'self';

/** A code as stored: its issuer and, once claimed, its claimant. */
export interface LinkCodeRecord {
  readonly codeHash: string;
  readonly issuer: LinkParty;
  readonly claimant: LinkParty | null;
  readonly expiresAt: number;
  readonly usedAt: number | null;
}

/** Expired codes are kept this long (so a late claim hears "expired", not "unknown"). */
const KEEP_EXPIRED_MS = 24 * 60 * 60 * 1000;

/** Reads and writes `persons`, `person_links` and `link_codes`. */
export class PersonLinksRepo {
  readonly #db: Kysely<Database>;
  readonly #now: Clock;

  constructor(db: Kysely<Database>, opts: RepoOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
  }

  /** The person an identity belongs to, or null when it is linked to none. */
  async personOf(actorId: string): Promise<LinkedPerson | null> {
    return (await this.personsOf([actorId])).get(actorId) ?? null;
  }

  /** The persons of these identities (only the linked ones are in the map). */
  async personsOf(actorIds: readonly string[]): Promise<Map<string, LinkedPerson>> {
    const out = new Map<string, LinkedPerson>();
    const unique = [...new Set(actorIds)];
    if (unique.length === 0) return out;
    const mine = await this.#db
      .selectFrom('person_links')
      .select(['actor_id', 'person_id'])
      .where('actor_id', 'in', unique)
      .execute();
    if (mine.length === 0) return out;
    const persons = await this.#persons([...new Set(mine.map((r) => r.person_id))]);
    for (const r of mine) {
      const p = persons.get(r.person_id);
      if (p) out.set(r.actor_id, p);
    }
    return out;
  }

  /** Every person, by name. */
  async list(): Promise<LinkedPerson[]> {
    const ids = await this.#db.selectFrom('persons').select('person_id').execute();
    const persons = await this.#persons(ids.map((r) => r.person_id));
    return [...persons.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /**
   * Makes `first` and `second` one person: `first`'s person (created with `first`'s name when it
   * has none) takes `second` and every identity of `second`'s person.
   */
  async link(first: LinkParty, second: LinkParty): Promise<LinkedPerson> {
    const now = this.#now();
    const personId = await this.#db.transaction().execute(async (tx) => {
      const rows = await tx
        .selectFrom('person_links')
        .select(['actor_id', 'person_id'])
        .where('actor_id', 'in', [first.id, second.id])
        .execute();
      const of = (id: string) => rows.find((r) => r.actor_id === id)?.person_id;
      let target = of(first.id);
      if (target === undefined) {
        target = `person:${randomUUID()}`;
        const name = first.name?.trim() || first.id;
        await tx
          .insertInto('persons')
          .values({ person_id: target, name, created_at: now })
          .execute();
        await tx
          .insertInto('person_links')
          .values({ actor_id: first.id, person_id: target, linked_at: now })
          .execute();
      }
      const old = of(second.id);
      if (old === target) return target;
      if (old !== undefined) {
        await tx
          .updateTable('person_links')
          .set({ person_id: target, linked_at: now })
          .where('person_id', '=', old)
          .execute();
        await tx.deleteFrom('persons').where('person_id', '=', old).execute();
      } else {
        await tx
          .insertInto('person_links')
          .values({ actor_id: second.id, person_id: target, linked_at: now })
          .execute();
      }
      return target;
    });
    const person = (await this.#persons([personId])).get(personId);
    if (!person) throw new Error(`person ${personId} vanished while linking`);
    return person;
  }

  /**
   * Takes an identity out of its person; a person left with one identity is no person any more.
   * Returns the person as it was, or null when the identity was linked to none.
   */
  async unlink(actorId: string): Promise<LinkedPerson | null> {
    const before = await this.personOf(actorId);
    if (before === null) return null;
    await this.#db.transaction().execute(async (tx) => {
      await tx.deleteFrom('person_links').where('actor_id', '=', actorId).execute();
      if (before.identities.length <= 2) {
        await tx.deleteFrom('person_links').where('person_id', '=', before.personId).execute();
        await tx.deleteFrom('persons').where('person_id', '=', before.personId).execute();
      }
    });
    return before;
  }

  /**
   * Stores a new code of `issuer`, valid until `expiresAt`; the issuer's earlier unconfirmed codes
   * stop working (one open code per identity), and long-expired codes are dropped.
   */
  async issueCode(codeHash: string, issuer: LinkParty, expiresAt: number): Promise<void> {
    const now = this.#now();
    await this.#db.transaction().execute(async (tx) => {
      await tx
        .updateTable('link_codes')
        .set({ used_at: now })
        .where('issuer_id', '=', issuer.id)
        .where('used_at', 'is', null)
        .execute();
      await tx
        .deleteFrom('link_codes')
        .where('expires_at', '<', now - KEEP_EXPIRED_MS)
        .execute();
      await tx
        .insertInto('link_codes')
        .values({
          code_hash: codeHash,
          issuer_id: issuer.id,
          issuer_name: issuer.name ?? null,
          issuer_chat: issuer.chat ?? null,
          expires_at: expiresAt,
          created_at: now,
        })
        .execute();
    });
  }

  /**
   * `claimant` sends the code: one conditional UPDATE claims it, so of two claimants exactly one
   * wins; the others (and a forged, stale or own code) learn why not.
   */
  async claimCode(
    codeHash: string,
    claimant: LinkParty,
  ): Promise<{ ok: true; code: LinkCodeRecord } | { ok: false; problem: LinkCodeProblem }> {
    const now = this.#now();
    const claimed = await this.#db
      .updateTable('link_codes')
      .set({
        claimant_id: claimant.id,
        claimant_name: claimant.name ?? null,
        claimant_chat: claimant.chat ?? null,
      })
      .where('code_hash', '=', codeHash)
      .where('claimant_id', 'is', null)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .where('issuer_id', '<>', claimant.id)
      .executeTakeFirst();
    const row = await this.#row(codeHash);
    if (claimed.numUpdatedRows > 0n && row) return { ok: true, code: row };
    if (!row) return { ok: false, problem: 'unknown' };
    if (row.issuer.id === claimant.id) return { ok: false, problem: 'self' };
    if (row.claimant !== null || row.usedAt !== null) return { ok: false, problem: 'used' };
    return { ok: false, problem: 'expired' };
  }

  /** The issuer's newest code claimed by someone and not yet confirmed (expired ones included). */
  async claimedCodeOf(issuerId: string): Promise<LinkCodeRecord | null> {
    const row = await this.#db
      .selectFrom('link_codes')
      .selectAll()
      .where('issuer_id', '=', issuerId)
      .where('claimant_id', 'is not', null)
      .where('used_at', 'is', null)
      .orderBy('created_at', 'desc')
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  /** Spends a claimed code once (confirm or cancel): true only for the first call in time. */
  async spendCode(codeHash: string, until: number): Promise<boolean> {
    const res = await this.#db
      .updateTable('link_codes')
      .set({ used_at: this.#now() })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', until)
      .executeTakeFirst();
    return res.numUpdatedRows > 0n;
  }

  async #row(codeHash: string): Promise<LinkCodeRecord | null> {
    const row = await this.#db
      .selectFrom('link_codes')
      .selectAll()
      .where('code_hash', '=', codeHash)
      .executeTakeFirst();
    return row ? toRecord(row) : null;
  }

  async #persons(personIds: readonly string[]): Promise<Map<string, LinkedPerson>> {
    const out = new Map<string, LinkedPerson>();
    if (personIds.length === 0) return out;
    const [named, links] = await Promise.all([
      this.#db
        .selectFrom('persons')
        .select(['person_id', 'name'])
        .where('person_id', 'in', personIds)
        .execute(),
      this.#db
        .selectFrom('person_links')
        .select(['person_id', 'actor_id'])
        .where('person_id', 'in', personIds)
        .orderBy('linked_at')
        .orderBy('actor_id')
        .execute(),
    ]);
    for (const p of named) {
      const identities = links.filter((l) => l.person_id === p.person_id).map((l) => l.actor_id);
      out.set(p.person_id, { personId: p.person_id, name: p.name, identities });
    }
    return out;
  }
}

function toRecord(row: Row<'link_codes'>): LinkCodeRecord {
  const party = (id: string, name: string | null, chat: string | null): LinkParty => ({
    id,
    ...(name !== null && { name }),
    ...(chat !== null && { chat }),
  });
  return {
    codeHash: row.code_hash,
    issuer: party(row.issuer_id, row.issuer_name, row.issuer_chat),
    claimant:
      row.claimant_id === null
        ? null
        : party(row.claimant_id, row.claimant_name, row.claimant_chat),
    expiresAt: row.expires_at,
    usedAt: row.used_at,
  };
}
