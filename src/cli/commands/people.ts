/**
 * `phasebridge people [--json]`, `phasebridge people unlink <identity>` and `phasebridge link
 * [code|confirm|cancel]` (issue 36): the people bridge.db knows across platforms, splitting one
 * identity off, and linking the CLI user (`cli:<os user>`) to a chat account the way `link` does in
 * chat. The CLI cannot post in a chat: the other side learns from its own answer what to do next.
 */
import type { Command } from 'commander';
import { InvalidInputError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

const IDENTITY = /^[a-z]+:\S+$/;

/** Registers `people` and `link`. */
export function registerPeopleCommands(program: Command, ctx: CliContext): void {
  const people = program
    .command('people')
    .description('the people linked across platforms: their identities and roles per chat')
    .option('--json', 'print as JSON')
    .action(async (opts: { json?: boolean }) => {
      const { peopleListing, peopleLines } = await import('../../chatops/people-words.ts');
      const listing = await peopleListing(await ctx.repos());
      if (opts.json) console.log(JSON.stringify(listing, null, 2));
      else for (const line of peopleLines(listing)) console.log(line);
    });

  people
    .command('unlink')
    .description('split one identity off its person (its roles stay as they are)')
    .argument('<identity>', 'platform:id as `people` lists it, e.g. slack:U012ABC')
    .action(async (identity: string) => {
      if (!IDENTITY.test(identity)) {
        throw new InvalidInputError(
          `"${identity}" is not an identity: write platform:id, e.g. telegram:123456`,
        );
      }
      const { unlinkIdentity } = await import('../../chatops/people-words.ts');
      console.log(await unlinkIdentity(await ctx.repos(), ctx.actor, identity));
    });

  program
    .command('link')
    .description(
      'link you (the CLI user) and a chat account as one person: a code, a code from chat, or confirm',
    )
    .argument('[code]', 'a code `link` gave in chat, or confirm / cancel (none: a new code)')
    .action(async (word: string | undefined) => {
      const { answerLink, claimLink, issueLink } = await import('../../chatops/person-linking.ts');
      const repos = await ctx.repos();
      const me = { id: ctx.actor, name: ctx.actor.slice('cli:'.length) };
      const step = word?.toLowerCase();
      const now = Date.now();
      const outcome =
        word === undefined
          ? await issueLink(repos, me, now)
          : step === 'confirm' || step === 'cancel'
            ? await answerLink(repos, me, step, now)
            : await claimLink(repos, me, word);
      await repos.audit.record({
        actor: ctx.actor,
        action: 'command:link',
        target: null,
        chatRef: null,
        outcome: outcome.ok ? 'allowed' : 'refused',
        detail: outcome.detail,
      });
      const words = outcome.words.replace(/`/g, '');
      // A refused step is a refused action (exit 1), not bad arguments.
      if (outcome.ok) console.log(words);
      else {
        process.stderr.write(`phasebridge: ${words}\n`);
        process.exitCode = 1;
      }
    });
}
