/**
 * A press of one of our Slack buttons (block_actions) and a submission of our reason modal
 * (view_submission), pure: a neutral ButtonPress or Reply, and the press's interaction handle
 * (what the adapter needs back to answer it).
 */
import { z } from 'zod';
import type { ButtonPress, Interaction, Reply } from '../events.ts';
import { decodeHandle, encodeHandle } from '../interaction-handle.ts';
import { type BotContext, chatUser, triggerKey } from './inbound.ts';
import {
  formatChatRef,
  formatMessageRef,
  formatPromptRef,
  parseChatRef,
  REASON_ACTION_ID,
  REASON_BLOCK_ID,
  REASON_CALLBACK_ID,
  type SlackChat,
} from './outbound.ts';

/** A Slack user as payloads carry it. */
interface PayloadUser {
  readonly id: string;
  readonly username?: string;
  readonly name?: string;
}

/** The fields of a `block_actions` payload that are read. */
export interface BlockActionsPayload {
  readonly trigger_id: string;
  readonly user: PayloadUser;
  readonly channel?: { readonly id: string };
  readonly container?: {
    readonly channel_id?: string;
    readonly message_ts?: string;
    readonly thread_ts?: string;
  };
  readonly message?: { readonly ts: string; readonly thread_ts?: string };
  readonly response_url?: string;
}

/** The fields of a `view_submission` payload that are read. */
export interface ViewSubmissionPayload {
  readonly trigger_id?: string;
  readonly user: PayloadUser;
  readonly view: {
    readonly id: string;
    readonly callback_id: string;
    readonly private_metadata?: string;
    readonly state: {
      readonly values: Record<string, Record<string, { readonly value?: string | null }>>;
    };
  };
}

/** What the adapter needs back from an interaction handle. */
export interface InteractionData {
  /** trigger_id (opens a modal within 3 s of the press) */
  readonly g: string;
  /** chat ref of the pressed message */
  readonly c: string;
  /** pressed message ts */
  readonly m: string;
  /** presser's user id */
  readonly u: string;
  /** response_url, when Slack gave one */
  readonly r?: string | undefined;
}

const interactionSchema = z.object({
  g: z.string().min(1),
  c: z.string().min(1),
  m: z.string().min(1),
  u: z.string().min(1),
  r: z.string().optional(),
});

/** Packs a press into an opaque, serialisable handle. */
export function encodeInteraction(data: InteractionData): Interaction {
  return encodeHandle('slack', data);
}

/** Unpacks a handle made by `encodeInteraction`; anything else is INVALID_INPUT. */
export function decodeInteraction(interaction: Interaction): InteractionData & { chat: SlackChat } {
  // The chat ref is parsed inside the schema, so a bad one is the same INVALID_INPUT.
  const schema = interactionSchema.transform((d) => ({ ...d, chat: parseChatRef(d.c) }));
  return decodeHandle(interaction, 'slack', schema, 'Slack');
}

/**
 * A press of one of our buttons (`actionId` is the button's opaque id). Presses outside a message
 * (modals, App Home) are not ours and yield undefined. A thread parent carries `thread_ts` equal
 * to its own ts; it is not in a thread.
 */
export function fromBlockAction(
  p: BlockActionsPayload,
  actionId: string,
  bot: BotContext,
): ButtonPress | undefined {
  const channel = p.channel?.id ?? p.container?.channel_id;
  const ts = p.message?.ts ?? p.container?.message_ts;
  if (channel === undefined || ts === undefined) return undefined;
  const threadTs = p.message?.thread_ts ?? p.container?.thread_ts;
  const chat: SlackChat =
    threadTs === undefined || threadTs === ts
      ? { team: bot.team, channel }
      : { team: bot.team, channel, thread: threadTs };
  const chatRef = formatChatRef(chat);
  return {
    kind: 'button',
    token: actionId,
    chatRef,
    ...(chat.thread !== undefined && { threadRef: chat.thread }),
    messageRef: formatMessageRef(chat, [ts]),
    user: chatUser(p.user.id, p.user.username ?? p.user.name),
    interaction: encodeInteraction({
      g: p.trigger_id,
      c: chatRef,
      m: ts,
      u: p.user.id,
      r: p.response_url,
    }),
    idempotencyKey: triggerKey(p.trigger_id),
  };
}

/** What the reason modal carries back in `private_metadata`. */
export function promptMetadata(chat: SlackChat): string {
  return JSON.stringify({ chat: formatChatRef(chat) });
}

/** The submitted reason of our modal as a Reply to the ref `askForReason` returned. */
export function fromViewSubmission(p: ViewSubmissionPayload): Reply | undefined {
  if (p.view.callback_id !== REASON_CALLBACK_ID) return undefined;
  let chat: SlackChat;
  try {
    chat = parseChatRef(String(JSON.parse(p.view.private_metadata ?? '{}').chat));
  } catch {
    return undefined;
  }
  const text = p.view.state.values[REASON_BLOCK_ID]?.[REASON_ACTION_ID]?.value ?? '';
  return {
    kind: 'reply',
    text,
    replyToMessageRef: formatPromptRef(chat, p.view.id),
    chatRef: formatChatRef(chat),
    ...(chat.thread !== undefined && { threadRef: chat.thread }),
    user: chatUser(p.user.id, p.user.username ?? p.user.name),
    idempotencyKey: p.trigger_id ? triggerKey(p.trigger_id) : `slack:view:${p.view.id}`,
  };
}
