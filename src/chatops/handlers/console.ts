/**
 * `console`: a one-time link that signs the presser in to the web console as themselves, sent
 * privately (Slack: an ephemeral message; Telegram and Discord: their private chat with the bot),
 * never in the chat. The session acts with the person's roles in the chat they asked in (from an
 * unbound private chat: their global role), and needs one to be given at all.
 */
import type { Channel } from '../../bridges/channel.ts';
import type { ChatUser } from '../../bridges/events.ts';
import {
  CHAT_LOGIN_TOKEN_TTL_MS,
  type ConsolePerson,
  consoleLoginUrl,
  issueLoginToken,
} from '../../bridges/web/session.ts';
import { describeError } from '../../errors.ts';
import { channelFor } from '../context.ts';
import type { CommandContext, HandlerResult } from './types.ts';

/** What the command answers when the console has no address people can open. */
export const NO_PUBLIC_URL_TEXT =
  'The console has no public address yet. Set PHASEBRIDGE_PUBLIC_URL to the https URL browsers reach it at (e.g. https://pb.example.com, usually a TLS proxy in front of `phasebridge serve`), restart the bridge, then send console again.';

/** How to open a private chat with the bot, per platform. */
const OPEN_PRIVATE: Readonly<Record<string, string>> = {
  telegram: 'open a private chat with the bot and press Start',
  discord: 'allow direct messages from this server’s members (Privacy Settings)',
  slack: 'make sure the app is in this channel',
};

/** Sends the person a sign-in link privately; the chat hears only that it was sent (or why not). */
export async function consoleCommand(ctx: CommandContext): Promise<HandlerResult> {
  const { deps, event, access } = ctx;
  const user = event.user;
  if (user.platform === 'web') {
    return { outcome: 'allowed', reply: 'You are in the console already.' };
  }
  if (deps.consoleUrl === undefined) {
    return { outcome: 'refused', detail: 'no PHASEBRIDGE_PUBLIC_URL', reply: NO_PUBLIC_URL_TEXT };
  }
  if (access.role === null) {
    const where = access.binding === null ? 'anywhere' : 'in this chat';
    return {
      outcome: 'refused',
      detail: 'no role',
      reply: `You have no role ${where}, so there is no console for you: an admin can give you one with allow.`,
    };
  }
  const b = access.binding;
  const person: ConsolePerson = {
    platform: user.platform,
    id: user.id,
    display: user.display || user.id,
    chatRef: b === null ? null : b.chatRef,
    ...(b?.thread != null && { threadRef: b.thread }),
  };
  const token = await issueLoginToken(
    deps.repos.consoleAuth,
    CHAT_LOGIN_TOKEN_TTL_MS,
    deps.clock().getTime(),
    person,
  );
  const where = b === null ? 'your global role' : `your ${access.role} role in this chat`;
  const minutes = CHAT_LOGIN_TOKEN_TTL_MS / 60_000;
  const words = `Your sign-in link for the phasebridge console, as ${person.display} with ${where} (one use, valid ${minutes} minutes; do not share it): ${consoleLoginUrl(deps.consoleUrl, token)}`;
  const channel = channelFor(deps, event.chatRef);
  const sent = channel
    ? await sendPrivately(channel, event.chatRef, user, words).catch((err: unknown) => {
        // The error names the chat and the refusal, never the link.
        deps.log.info(
          { err: describeError(err).chatReply, chat: event.chatRef },
          'chatops: no private message for console',
        );
        return false;
      })
    : false;
  if (!sent) {
    // The token stays unused and expires; it never reaches a chat others read.
    const how = OPEN_PRIVATE[user.platform] ?? 'open a private chat with the bot';
    return {
      outcome: 'failed',
      detail: 'sign-in link not sent: no private message possible',
      reply: `I could not send you a private message, so no sign-in link was sent. To get one, ${how}, then send console again.`,
    };
  }
  const reply = event.direct && user.platform !== 'slack' ? undefined : sentText(user);
  return {
    outcome: 'allowed',
    detail: 'sign-in link sent privately',
    ...(reply !== undefined && { reply }),
  };
}

function sentText(user: ChatUser): string {
  const where = user.platform === 'slack' ? 'in a message only you see' : 'in a private message';
  return `${user.display || user.id}: I sent you a console sign-in link ${where}.`;
}

/** Slack: an ephemeral message; elsewhere the private chat. False where there is no such path; rejects when it failed. */
async function sendPrivately(
  channel: Channel,
  chatRef: string,
  user: ChatUser,
  words: string,
): Promise<boolean> {
  if (user.platform === 'slack' && channel.whisper) {
    await channel.whisper(chatRef, user, words);
    return true;
  }
  if (!channel.directMessage) return false;
  await channel.directMessage(user, words);
  return true;
}
