/**
 * A vote carries its person (issue 36): the voter's linked identities as bridge.db has them when
 * the vote is committed, whoever sent it (chat, console, CLI), so the engine's quorum and
 * four-eyes rules count people, not platform accounts.
 */
import type { PersonLinksRepo } from '../../db/repositories/person-links.ts';
import type { CommandInput } from './job-results.ts';

/** The command with its actor's `sameAs` set from the links (votes only; others unchanged). */
export async function withPerson(
  links: Pick<PersonLinksRepo, 'personOf'>,
  command: CommandInput,
): Promise<CommandInput> {
  if (command.type !== 'answerCheckpoint' && command.type !== 'requestChanges') return command;
  // What the sender claimed is not trusted: the links are read here, at commit time.
  const { sameAs: _claimed, ...actor } = command.actor;
  const person = await links.personOf(actor.id);
  const sameAs = person?.identities.filter((id) => id !== actor.id) ?? [];
  return { ...command, actor: sameAs.length > 0 ? { ...actor, sameAs } : actor };
}
