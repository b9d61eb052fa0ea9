/**
 * `phasebridge people` (issue 36): the people bridge.db knows, each with its identities and each
 * identity's roles per chat (roles stay per identity and chat: linking grants none), then the
 * identities with a role that are linked to nobody; and `people unlink <identity>`.
 */
import type { Repositories } from '../db/repositories/index.ts';
import type { Role } from '../db/schema.ts';
import { NotFoundError } from '../errors.ts';
import { identityWords, personWords } from './person-linking.ts';

type Repos = Pick<Repositories, 'personLinks' | 'people' | 'allowlist' | 'bindings' | 'audit'>;

/** One identity with its roles: `where` is a chat ref, or `global`. */
export interface IdentityRoles {
  readonly id: string;
  readonly name?: string;
  readonly roles: readonly { readonly where: string; readonly role: Role }[];
}

/** What `people` lists: linked people, then identities with a role but no link. */
export interface PeopleListing {
  readonly people: readonly {
    readonly person: string;
    readonly name: string;
    readonly identities: readonly IdentityRoles[];
  }[];
  readonly unlinked: readonly IdentityRoles[];
}

/** Reads the listing from bridge.db. */
export async function peopleListing(repos: Repos): Promise<PeopleListing> {
  const [persons, entries, bindings] = await Promise.all([
    repos.personLinks.list(),
    repos.allowlist.list(),
    repos.bindings.list(),
  ]);
  const chatOf = new Map(
    bindings.map((b) => [b.id, b.thread === null ? b.chatRef : `${b.chatRef}:${b.thread}`]),
  );
  const roles = new Map<string, { where: string; role: Role }[]>();
  for (const e of entries) {
    const id = `${e.platform}:${e.userId}`;
    const where = e.bindingId === null ? 'global' : (chatOf.get(e.bindingId) ?? e.scope);
    roles.set(id, [...(roles.get(id) ?? []), { where, role: e.role }]);
  }
  const identity = async (id: string): Promise<IdentityRoles> => {
    const name = await repos.people.platformName(id);
    return { id, ...(name !== undefined && { name }), roles: roles.get(id) ?? [] };
  };
  const linked = new Set(persons.flatMap((p) => p.identities));
  return {
    people: await Promise.all(
      persons.map(async (p) => ({
        person: p.personId,
        name: p.name,
        identities: await Promise.all(p.identities.map(identity)),
      })),
    ),
    unlinked: await Promise.all([...roles.keys()].filter((id) => !linked.has(id)).map(identity)),
  };
}

/** The listing as lines for a terminal. */
export function peopleLines(listing: PeopleListing): string[] {
  const lines: string[] = [];
  const identityLine = (i: IdentityRoles) => {
    const name = i.name !== undefined && i.name !== i.id ? ` ${i.name}` : '';
    const roles = i.roles.map(
      (r) => `${r.role} ${r.where === 'global' ? 'globally' : `in ${r.where}`}`,
    );
    return `  • ${i.id}${name}: ${roles.length > 0 ? roles.join(', ') : 'no role'}`;
  };
  if (listing.people.length === 0)
    lines.push('No linked people (send link in a chat to link your accounts).');
  for (const p of listing.people) {
    lines.push(`${p.name} (${p.identities.length} identities, ${p.person})`);
    lines.push(...p.identities.map(identityLine));
  }
  if (listing.unlinked.length > 0) {
    lines.push('', 'Linked to nobody:');
    lines.push(...listing.unlinked.map(identityLine));
  }
  return lines;
}

/** `people unlink <identity>`: splits it off its person, audited; NotFoundError when unlinked. */
export async function unlinkIdentity(
  repos: Repos,
  actor: string,
  identity: string,
): Promise<string> {
  const before = await repos.personLinks.unlink(identity);
  if (before === null) throw new NotFoundError(`${identity} is not linked to anyone`);
  const was = await personWords(repos, before);
  await repos.audit.record({
    actor,
    action: 'people:unlink',
    target: identity,
    chatRef: null,
    outcome: 'allowed',
    detail: `left ${before.personId} (${before.name})`,
  });
  const rest = before.identities.filter((id) => id !== identity);
  const left =
    rest.length >= 2
      ? `${before.name} is still ${await personWords(repos, { ...before, identities: rest })}`
      : `${await identityWords(repos, rest[0] ?? identity)} is linked to nobody now`;
  return `${identity} is no longer ${before.name} (was ${was}); ${left}. Roles are unchanged.`;
}
