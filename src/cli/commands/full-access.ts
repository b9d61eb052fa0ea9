import { resolve } from 'node:path';
import type { Command } from 'commander';
import { NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/**
 * `agents allow-full|revoke-full|full-access`: where steps may run with `permissions: full`
 * (Claude bypassPermissions, Codex danger-full-access). Deny by default; only someone who can
 * run the CLI as the bridge's user (its admin) grants it, and every change is audited.
 */
export function registerFullAccessCommands(agents: Command, ctx: CliContext): void {
  agents
    .command('allow-full')
    .description('let steps in a workspace run with permissions: full (admin only; audited)')
    .argument('<workspace>', 'the workspace folder')
    .action(async (dir: string) => {
      const workspace = resolve(dir);
      const repos = await ctx.repos();
      await repos.fullAccess.allow(workspace, ctx.actor);
      await repos.audit.record({
        actor: ctx.actor,
        action: 'agents.allow-full',
        target: workspace,
        outcome: 'allowed',
      });
      console.log(`steps in ${workspace} may now run with permissions: full`);
    });

  agents
    .command('revoke-full')
    .description('withdraw permissions: full from a workspace')
    .argument('<workspace>', 'the workspace folder')
    .action(async (dir: string) => {
      const workspace = resolve(dir);
      const repos = await ctx.repos();
      if (!(await repos.fullAccess.revoke(workspace))) {
        throw new NotFoundError(`full access was not allowed in ${workspace}`);
      }
      await repos.audit.record({
        actor: ctx.actor,
        action: 'agents.revoke-full',
        target: workspace,
        outcome: 'allowed',
      });
      console.log(`steps in ${workspace} may no longer run with permissions: full`);
    });

  agents
    .command('full-access')
    .description('list the workspaces where permissions: full is allowed')
    .action(async () => {
      const list = await (await ctx.repos()).fullAccess.list();
      if (list.length === 0) console.log('no workspace allows permissions: full');
      for (const w of list) {
        console.log(
          `${w.workspace}  allowed by ${w.allowedBy} at ${new Date(w.createdAt).toISOString()}`,
        );
      }
    });
}
