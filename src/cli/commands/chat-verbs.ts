/**
 * The chat verbs' CLI twins that did not exist yet: `workflows`, `whoami`, `bindings`, `unbind`,
 * `access` and `pair`. Their answers use the chat's words (listing-words.ts), so a user reads the
 * same thing in both places; src/chatops/vocabulary.ts is the table that pairs them.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseChatRef } from '../../bridges/refs.ts';
import { accessLines, bindingsLines } from '../../chatops/listing-words.ts';
import type { AllowScope } from '../../db/repositories/allowlist.ts';
import { NotFoundError } from '../../errors.ts';
import type { CliContext } from '../context.ts';

/** Registers the chat verbs' twins on the program. */
export function registerChatVerbCommands(program: Command, ctx: CliContext): void {
  program
    .command('workflows')
    .description('the workflows a run can use in a workspace (its own, the home’s, built-ins)')
    .option('--workspace <dir>', 'the workspace (default: PHASEBRIDGE_WORKSPACE)')
    .action(async (opts: { workspace?: string }) => {
      const config = await ctx.config();
      const { WorkflowRegistry } = await import('../../jobs/orchestrator/workflow-registry.ts');
      const registry = new WorkflowRegistry({ home: config.home, log: await ctx.logger() });
      const list = await registry.list(resolve(opts.workspace ?? config.workspace));
      if (list.length === 0) console.log('No workflows here.');
      else console.log('Workflows:');
      for (const w of list) {
        const about = w.description ?? w.name;
        console.log(`• ${w.id}${about ? ` — ${about}` : ''}`);
      }
    });

  program
    .command('whoami')
    .description('who the CLI acts as (the audit names you so) and what it may do')
    .action(async () => {
      console.log(`You are ${ctx.actor} (the CLI user).`);
      console.log(
        `You may do everything on this bridge (${await ctx.dbFile()}): chat roles apply to chat users only.`,
      );
    });

  program
    .command('bindings')
    .description('the chats served: chat, thread, workspace, defaults, follow')
    .action(async () => {
      const repos = await ctx.repos();
      const [bindings, followed] = await Promise.all([
        repos.bindings.list(),
        repos.followed.list(),
      ]);
      const lines = bindingsLines(bindings, new Set(followed.map((f) => f.workspace)));
      for (const line of lines) console.log(line);
    });

  program
    .command('unbind')
    .description('stop serving a chat (its roles go too)')
    .argument('<chat>', 'the chat ref as `bindings` lists it, e.g. telegram:-1001234')
    .action(async (chat: string) => {
      const { unbindChat } = await import('../../chatops/access-edits.ts');
      console.log(await unbindChat(await ctx.repos(), ctx.actor, chat));
    });

  program
    .command('access')
    .description('who has which role where (globally and per chat)')
    .option('--chat <chatref>', 'only the roles of this bound chat (and the global ones)')
    .action(async (opts: { chat?: string }) => {
      const repos = await ctx.repos();
      const bindings = await repos.bindings.list();
      let scopes: AllowScope[] | undefined;
      if (opts.chat !== undefined) {
        const ref = parseChatRef(opts.chat);
        const b = await repos.bindings.find(ref.chat, ref.thread ?? null);
        if (!b) throw new NotFoundError(`${opts.chat} is not bound`);
        scopes = ['global', { bindingId: b.id }];
      }
      const entries = scopes
        ? (await Promise.all(scopes.map((scope) => repos.allowlist.list({ scope })))).flat()
        : await repos.allowlist.list();
      const byId = new Map(bindings.map((b) => [b.id, b]));
      for (const line of accessLines(entries, byId)) console.log(line);
    });

  program
    .command('pair')
    .description('make a one-time code that binds a chat: send `pair CODE` there (10 minutes)')
    .action(async () => {
      const { createPairingCode } = await import('../../chatops/pairing.ts');
      const code = await createPairingCode(await ctx.repos());
      console.log(`Pairing code: ${code} (valid 10 minutes, once).`);
      console.log(
        `Send /pair ${code} in the chat (Slack: /pb pair ${code}) while \`phasebridge serve\` runs; the sender becomes its admin.`,
      );
    });
}
