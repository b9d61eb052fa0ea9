import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { FollowHooks } from '../../engine/layouts/module.ts';
import { InvalidInputError, NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/**
 * `phasebridge follow WORKSPACE [--stop]`: a running bridge announces the phase changes of the
 * workspace's codexclaw sessions (rows appended to `.codexclaw/ledger.jsonl` from now on) in the
 * chats bound to it. Read-only: codexclaw's files are never written.
 */
export function registerFollowCommand(program: Command, ctx: CliContext): void {
  program
    .command('follow')
    .description(
      "announce the phase changes of a workspace's codexclaw sessions in the chats bound to it (read-only)",
    )
    .argument('<workspace>', 'a folder holding a .codexclaw/ written by codexclaw')
    .option('--stop', 'stop following it')
    .action(async (dir: string, opts: { stop?: boolean }) => {
      const workspace = resolve(dir);
      const repos = await ctx.repos();
      if (opts.stop) {
        if (!(await repos.followed.unfollow(workspace))) {
          throw new NotFoundError(`${workspace} is not followed`);
        }
        console.log(`${workspace} is no longer followed`);
        return;
      }
      console.log(await followWorkspace(ctx, workspace));
    });
}

/** Refuses a workspace without a `.codexclaw/` folder (checked before anything is written). */
export async function assertFollowable(workspace: string): Promise<void> {
  await followable(workspace);
}

/** The followed format's hooks (the layouts table's `follow`), for a workspace that has its folder. */
async function followable(workspace: string): Promise<FollowHooks> {
  const { followedFormat } = await import('../../engine/layouts/index.ts');
  const follow = followedFormat();
  if (follow === undefined || !(await follow.present(workspace))) {
    throw new InvalidInputError(`${workspace} has no ${follow?.folder ?? 'log'} folder to follow`);
  }
  return follow;
}

/** Follows a workspace's `.codexclaw/` from its ledger's current end; says what it did. */
export async function followWorkspace(ctx: CliContext, workspace: string): Promise<string> {
  const follow = await followable(workspace);
  const repos = await ctx.repos();
  const fresh = await repos.followed.follow(workspace, await follow.end(workspace));
  const chats = (await repos.bindings.list()).filter((b) => resolve(b.workspace) === workspace);
  const where =
    chats.length === 0
      ? 'no chat is bound to it yet (`phasebridge bind CHAT --workspace DIR`)'
      : `announced in ${chats.length} bound chat(s)`;
  return `${fresh ? 'Following' : 'Already following'} ${workspace}'s ${follow.what}: ${where}`;
}
