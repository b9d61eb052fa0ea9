import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
// From its own module: the repositories' index would load Kysely for `--help`.
import { ROLES } from '../../db/roles.ts';
import type { Role } from '../../db/schema.ts';
import type { CliContext } from '../context.ts';
import { assertFollowable, followWorkspace } from './follow.ts';

/** `allow`, `deny` and `bind`: who may do what, and which chat serves which workspace. */
export function registerAccessCommands(program: Command, ctx: CliContext): void {
  program
    .command('allow')
    .description('give a platform user a role, globally or in one bound chat')
    .argument('<user>', 'platform:userId, e.g. telegram:123456 (the immutable id, not a name)')
    .addOption(new Option('--role <role>', 'the role to give').choices(ROLES).makeOptionMandatory())
    .option('--chat <chatref>', 'only in this bound chat, e.g. telegram:-1001234 (default: global)')
    .action(async (user: string, opts: { role: Role; chat?: string }) => {
      const { allowUser } = await import('../../chatops/access-edits.ts');
      console.log(await allowUser(await ctx.repos(), ctx.actor, { user, ...opts }));
    });

  program
    .command('deny')
    .description("remove a platform user's role, globally or in one bound chat")
    .argument('<user>', 'platform:userId, e.g. telegram:123456')
    .option('--chat <chatref>', 'only in this bound chat (default: the global role)')
    .action(async (user: string, opts: { chat?: string }) => {
      const { denyUser } = await import('../../chatops/access-edits.ts');
      console.log(await denyUser(await ctx.repos(), ctx.actor, { user, ...opts }));
    });

  program
    .command('bind')
    .description('serve a chat (or one thread of it) with a workspace')
    .argument(
      '<chatref>',
      'e.g. telegram:-1001234, slack:T01:C02, discord:<guild>:<channel>[:<thread>]',
    )
    .requiredOption('--workspace <dir>', 'the folder the runs of this chat work in')
    .option('--workflow <id>', 'the workflow `run` uses when none is named')
    .option('--agent <name>', 'the default agent of this chat')
    .option('--follow', "also announce the workspace's codexclaw sessions' phase changes there")
    .action(
      async (
        chat: string,
        opts: { workspace: string; workflow?: string; agent?: string; follow?: boolean },
      ) => {
        const { bindChat } = await import('../../chatops/access-edits.ts');
        const { follow, ...rest } = opts;
        const check = follow ? assertFollowable : undefined;
        console.log(await bindChat(await ctx.repos(), ctx.actor, { chat, ...rest }, check));
        if (follow) console.log(await followWorkspace(ctx, resolve(opts.workspace)));
      },
    );
}
