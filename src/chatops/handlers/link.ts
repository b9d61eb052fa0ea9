/**
 * `link`, `link <code>`, `link confirm`, `link cancel` (issue 36): one person on several
 * platforms, through person-linking.ts. Anyone may send it, in any chat, but only a person with a
 * role somewhere (in a bound chat or globally) is linked: a stranger gets no code to hand around.
 * The other side of a link is told in the chat it used.
 */
import type { LinkParty } from '../../db/repositories/index.ts';
import { describeError } from '../../errors.ts';
import { sendTo } from '../context.ts';
import type { ParsedCommand } from '../grammar.ts';
import { answerLink, claimLink, issueLink, type LinkOutcome } from '../person-linking.ts';
import { type CommandContext, type HandlerResult, text } from './types.ts';

type Link = Extract<ParsedCommand, { verb: 'link' }>;

/** What a person without any role hears. */
export const LINK_NO_ROLE_TEXT =
  'You have no role anywhere here, so there is nothing to link: an admin can give you one with allow.';

/** Runs one link step for the sender and tells the other side. */
export async function linkCommand(ctx: CommandContext, cmd: Link): Promise<HandlerResult> {
  const { deps, event, access } = ctx;
  if (!(await hasAnyRole(ctx))) {
    return { outcome: 'refused', detail: 'no role', reply: LINK_NO_ROLE_TEXT };
  }
  const me: LinkParty = {
    id: access.actor.id,
    name: event.user.display || access.actor.name,
    chat: event.chatRef,
  };
  const now = deps.clock().getTime();
  const repos = deps.repos;
  let outcome: LinkOutcome;
  if (cmd.code !== undefined) outcome = await claimLink(repos, me, cmd.code);
  else if (cmd.step !== undefined) outcome = await answerLink(repos, me, cmd.step, now);
  else outcome = await issueLink(repos, me, now);
  if (outcome.tell !== undefined && outcome.tell.chat !== event.chatRef) {
    const { chat, words } = outcome.tell;
    await sendTo(deps, chat, { ...text(words), urgency: 'interactive' }).catch((err: unknown) =>
      deps.log.info({ err: describeError(err).chatReply, chat }, 'chatops: link notice not sent'),
    );
  }
  return {
    outcome: outcome.ok ? 'allowed' : 'refused',
    detail: outcome.detail,
    reply: outcome.words,
  };
}

/** A role in this chat, or in any bound chat, or globally (the console's admin has one). */
async function hasAnyRole(ctx: CommandContext): Promise<boolean> {
  if (ctx.access.role !== null) return true;
  const { platform, id } = ctx.event.user;
  const entries = await ctx.deps.repos.allowlist.list({ platform });
  return entries.some((e) => e.userId === id);
}
