/**
 * Telegram's side of a send made again after a restart (Channel.clearRepeats): the earlier copy,
 * which bridge.db does not know, loses its buttons.
 */
import type { OutgoingMessage } from '../messages.ts';
import type { TelegramCalls } from './api-calls.ts';
import { formatMessageRef, parseMessageRef, renderMessage } from './outbound.ts';

/**
 * How many ids below a resend an earlier copy of it is looked for: the chat's other messages
 * (people's, those sent meanwhile) sit between the two copies; each id looked at is one call.
 */
const REPEAT_SPAN = 10;

/** A message ref of this adapter, or undefined for another's (or a malformed one). */
function safeMessageRef(ref: string): ReturnType<typeof parseMessageRef> | undefined {
  try {
    return parseMessageRef(ref);
  } catch {
    return undefined;
  }
}

/**
 * Takes the buttons off an earlier copy of the send made again as `sent` (see
 * Channel.clearRepeats). Telegram has no history for bots and no idempotency key, but a chat's
 * message ids grow: the copy is one of the ids below `sent` and above the newest message the
 * bridge knows there. Each unknown id in that span (at most REPEAT_SPAN) gets an empty
 * keyboard: another person's message or one of ours without buttons is refused or left as it
 * is by Telegram; ours with buttons, which bridge.db does not know, can only be a repeat. With
 * nothing known below `sent` no span is guessed.
 */
export async function clearRepeats(
  c: TelegramCalls,
  sent: string,
  message: OutgoingMessage,
  known: readonly string[],
): Promise<string[]> {
  const { chat, messageIds } = parseMessageRef(sent);
  const first = Math.min(...messageIds);
  const ids = new Set<number>(messageIds);
  for (const ref of known) {
    const k = safeMessageRef(ref);
    if (k?.chat.chatId === chat.chatId) for (const id of k.messageIds) ids.add(id);
  }
  const below = [...ids].filter((id) => id < first);
  if (below.length === 0) return [];
  const floor = Math.max(...below);
  const expected = renderMessage(message).at(-1)?.visible.trim();
  const found: string[] = [];
  await c.queues.run(String(chat.chatId), async () => {
    for (let id = first - 1; id > floor && id >= first - REPEAT_SPAN; id--) {
      if (ids.has(id)) continue;
      const edited = await c
        .call(() =>
          c.api.editMessageReplyMarkup(chat.chatId, id, {
            reply_markup: { inline_keyboard: [] },
          }),
        )
        .catch(() => undefined);
      if (edited === undefined || edited === true) continue;
      c.log.info({ chat: chat.chatId, id }, 'telegram: buttons taken off a repeated send');
      if (edited.text?.trim() === expected) found.push(formatMessageRef(chat, [id]));
    }
  });
  return found;
}
