import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { formatChatRef, parseChatRef, parseUserRef } from '../../bridges/refs.ts';
// From its own module: the repositories' index would load Kysely for `--help`.
import { ROLES } from '../../db/repositories/allowlist.ts';
import type { AllowScope, Repositories } from '../../db/repositories/index.ts';
import type { Role } from '../../db/schema.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
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
    .action(async (userText: string, opts: { role: Role; chat?: string }) => {
      const user = parseUserRef(userText);
      const repos = await ctx.repos();
      const scope = await scopeOf(repos, opts.chat);
      await repos.allowlist.allow(scope, user.platform, user.id, opts.role);
      await audit(ctx, repos, 'allow', userText, opts.chat, `role ${opts.role}`);
      console.log(`${userText} is now ${opts.role} ${opts.chat ? `in ${opts.chat}` : 'globally'}`);
    });

  program
    .command('deny')
    .description("remove a platform user's role, globally or in one bound chat")
    .argument('<user>', 'platform:userId, e.g. telegram:123456')
    .option('--chat <chatref>', 'only in this bound chat (default: the global role)')
    .action(async (userText: string, opts: { chat?: string }) => {
      const user = parseUserRef(userText);
      const repos = await ctx.repos();
      const scope = await scopeOf(repos, opts.chat);
      const removed = await repos.allowlist.deny(scope, user.platform, user.id);
      await audit(ctx, repos, 'deny', userText, opts.chat, removed ? 'removed' : 'had no role');
      const where = opts.chat ? `in ${opts.chat}` : 'globally';
      console.log(
        removed ? `${userText} has no role ${where} any more` : `${userText} had no role ${where}`,
      );
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
        chatText: string,
        opts: { workspace: string; workflow?: string; agent?: string; follow?: boolean },
      ) => {
        const ref = parseChatRef(chatText);
        const workspace = resolve(opts.workspace);
        if (!existsSync(workspace) || !statSync(workspace).isDirectory()) {
          throw new InvalidInputError(`workspace ${workspace} is not a folder; create it first`);
        }
        if (opts.follow) await assertFollowable(workspace);
        const repos = await ctx.repos();
        if (opts.agent && !(await repos.agents.get(opts.agent))) {
          throw new NotFoundError(
            `no agent named '${opts.agent}'; see \`phasebridge agents list\``,
          );
        }
        await repos.bindings.bind({
          chatRef: ref.chat,
          thread: ref.thread ?? null,
          workspace,
          defaultWorkflow: opts.workflow,
          defaultAgent: opts.agent,
        });
        // An admin binding a chat again is the sign it works again: it is tried again.
        await repos.unreachable.clear(formatChatRef(ref));
        if (ref.thread !== undefined) await repos.unreachable.clear(ref.chat);
        await audit(ctx, repos, 'bind', chatText, chatText, workspace);
        console.log(`${chatText} is bound to ${workspace}`);
        if (opts.follow) console.log(await followWorkspace(ctx, workspace));
      },
    );
}

async function scopeOf(repos: Repositories, chat: string | undefined): Promise<AllowScope> {
  if (!chat) return 'global';
  const ref = parseChatRef(chat);
  const binding = await repos.bindings.find(ref.chat, ref.thread ?? null);
  if (!binding) {
    throw new NotFoundError(
      `${chat} is not bound; run \`phasebridge bind ${chat} --workspace DIR\` first`,
    );
  }
  return { bindingId: binding.id };
}

async function audit(
  ctx: CliContext,
  repos: Repositories,
  action: string,
  target: string,
  chatRef: string | undefined,
  detail: string,
): Promise<void> {
  await repos.audit.record({
    actor: ctx.actor,
    action,
    target,
    chatRef: chatRef ?? null,
    outcome: 'allowed',
    detail,
  });
}
