/** `bindings`, `unbind` and `access`: which chats are served and who may do what (admin role). */
import { parseChatRef } from '../../bridges/refs.ts';
import type { BindingRecord } from '../../db/repositories/index.ts';
import { NotFoundError } from '../../errors.ts';
import { hasRole } from '../authorize.ts';
import type { ParsedCommand } from '../grammar.ts';
import { accessLines, bindingsLines, unbindWords } from '../listing-words.ts';
import { bindingOf, type CommandContext, type HandlerResult } from './types.ts';

/** `bindings`: the chats the sender administers (a global admin: all of them). */
export async function bindingsCommand(ctx: CommandContext): Promise<HandlerResult> {
  const { repos } = ctx.deps;
  const [all, followed] = await Promise.all([repos.bindings.list(), repos.followed.list()]);
  const mine = await administered(ctx, all);
  const reply = bindingsLines(mine, new Set(followed.map((f) => f.workspace))).join('\n');
  return { outcome: 'allowed', detail: `${mine.length} bindings`, reply };
}

/**
 * `unbind <chat>`: removes the binding of a chat the sender administers (naming this chat too:
 * typing the ref is the confirmation). A chat they do not administer reads as not bound, so the
 * answer says nothing about chats they cannot see.
 */
export async function unbindCommand(
  ctx: CommandContext,
  cmd: Extract<ParsedCommand, { verb: 'unbind' }>,
): Promise<HandlerResult> {
  const ref = parseChatRef(cmd.chat);
  const { repos } = ctx.deps;
  const all = await repos.bindings.list();
  const target = all.find((b) => b.chatRef === ref.chat && b.thread === (ref.thread ?? null));
  if (target === undefined || (await administered(ctx, [target])).length === 0) {
    throw new NotFoundError(unbindWords(cmd.chat, false));
  }
  const removed = await repos.bindings.remove(target.chatRef, target.thread);
  return {
    outcome: 'allowed',
    target: `binding:${target.id}`,
    detail: `unbound ${cmd.chat} (${target.workspace})`,
    reply: unbindWords(cmd.chat, removed),
  };
}

/** `access`: who has which role in this chat, and globally. */
export async function accessCommand(ctx: CommandContext): Promise<HandlerResult> {
  const binding = bindingOf(ctx);
  const { allowlist } = ctx.deps.repos;
  const [here, global] = await Promise.all([
    allowlist.list({ scope: { bindingId: binding.id } }),
    allowlist.list({ scope: 'global' }),
  ]);
  const reply = accessLines([...global, ...here], new Map([[binding.id, binding]])).join('\n');
  return { outcome: 'allowed', reply };
}

/** The bindings among `bindings` in which the sender is admin (their global role counts). */
async function administered(
  ctx: CommandContext,
  bindings: readonly BindingRecord[],
): Promise<BindingRecord[]> {
  const { platform, id } = ctx.event.user;
  const out: BindingRecord[] = [];
  for (const b of bindings) {
    if (hasRole(await ctx.deps.repos.allowlist.roleOf(platform, id, b.id), 'admin')) out.push(b);
  }
  return out;
}
