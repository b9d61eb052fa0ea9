/**
 * The one way a person is named to humans (issue 29): the name they have on their platform
 * (Telegram @username, else first name; Slack @name; Discord display name; the console's admin),
 * the OS user for the CLI (`cli:alice` is "alice"), and the id only when nothing better is known.
 * Raw ids belong in `--json` output and the ledger, never in a sentence. In a chat message's text
 * chatops wraps this name in a mention segment (chatops/words.ts personSegment): the adapter of
 * the person's own platform shows its mention (Slack `<@U123>`, Discord `<@123>`), the others this.
 */
import type { Actor } from './model.ts';

/** A person by id and, when known, the name they go by. */
export type Person = Pick<Actor, 'id' | 'name'>;

/** The name a person recognises. */
export function personName(p: Person): string {
  const name = p.name?.trim();
  if (name) return name;
  if (p.id.startsWith('cli:')) return p.id.slice('cli:'.length);
  return p.id;
}

/** Several people: "Alice", "Alice and Bob", "Alice, Bob and Carol" ("nobody" for none). */
export function peopleNames(people: readonly Person[]): string {
  const names = people.map(personName);
  if (names.length <= 1) return names[0] ?? 'nobody';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}
