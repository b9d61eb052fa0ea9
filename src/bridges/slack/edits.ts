/**
 * A person's edit of their Slack message (issue 29), pure: a `message_changed` event carrying
 * `edited` becomes a neutral Edit, which chatops answers (never applies) when the message was for
 * the bot. Link unfurls and new reply counts change a message without `edited`: no edit.
 */
import type { Edit } from '../events.ts';
import {
  type BotContext,
  chatUser,
  commandWords,
  type MessagePayload,
  mentionText,
  normalizeSlackText,
} from './inbound.ts';
import { formatChatRef } from './outbound.ts';

/** The fields of a `message_changed` event that are read (the message as it reads now). */
interface ChangedMessage {
  readonly user?: unknown;
  readonly text?: unknown;
  readonly ts?: unknown;
  readonly thread_ts?: unknown;
  readonly bot_id?: unknown;
  /** Set only when a person edited it (not for an unfurl or a new reply count). */
  readonly edited?: { readonly ts?: unknown };
}

/**
 * A person's edit of their message (`message_changed` with `edited`) as an Edit: with our mention
 * it was a command (its verb); its first key is a thread reply's (`slack:msg:<channel>:<ts>`).
 * Unfurls, reply counts, bots (ourselves included) and anything else yield undefined.
 */
export function fromMessageEdit(p: MessagePayload, bot: BotContext): Edit | undefined {
  const e = p.event as MessagePayload['event'] & { message?: ChangedMessage };
  const m = e.subtype === 'message_changed' ? e.message : undefined;
  if (m === undefined || typeof e.channel !== 'string') return undefined;
  const { user, text, ts } = m;
  if (typeof user !== 'string' || typeof text !== 'string' || typeof ts !== 'string') return;
  if (m.bot_id !== undefined || user === bot.botUserId || typeof m.edited?.ts !== 'string') return;
  const id = bot.botUserId.replace(/[^A-Za-z0-9]/g, '');
  const mentioned = new RegExp(`<@${id}(?:\\|[^>]*)?>`).test(text);
  const words = mentioned ? mentionText(text, bot) : normalizeSlackText(text).trim();
  const thread = typeof m.thread_ts === 'string' && m.thread_ts !== ts ? m.thread_ts : undefined;
  return {
    kind: 'edit',
    text: words,
    chatRef: formatChatRef({ team: bot.team, channel: e.channel, thread }),
    ...(thread !== undefined && { threadRef: thread }),
    user: chatUser(user),
    originalKey: `slack:msg:${e.channel}:${ts}`,
    ...(mentioned && { command: commandWords(words).name }),
    idempotencyKey: `slack:edit:${e.channel}:${ts}:${m.edited.ts}`,
  };
}
