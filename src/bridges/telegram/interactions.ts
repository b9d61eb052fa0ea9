/**
 * Answers to a button press on Telegram: a private alert or a public reply, and the ForceReply
 * prompt that asks the presser for a reason.
 */
import { PhasebridgeError } from '../../errors.ts';
import type { AnswerOptions } from '../channel.ts';
import type { Interaction } from '../events.ts';
import { rich } from '../render-text.ts';
import type { TelegramCalls } from './api-calls.ts';
import { isExpiredQuery } from './errors.ts';
import { decodeInteraction, type InteractionData } from './inbound.ts';
import {
  answerKey,
  callbackAnswerText,
  escapeHtml,
  formatChatRef,
  formatMessageRef,
  renderMessage,
  sendOptions,
  type TelegramChat,
} from './outbound.ts';

/** The channel's calls, and the callback queries not answered yet. */
export interface PressCalls extends TelegramCalls {
  /** Callback queries not answered yet; answered automatically once the handler returns. */
  readonly pendingCallbacks: Set<string>;
}

/** The chat (and topic) of the pressed message. */
function pressedChat(data: InteractionData): TelegramChat {
  return data.t === undefined ? { chatId: data.c } : { chatId: data.c, topic: data.t };
}

/**
 * Private: a callback alert only the presser sees (an alert, not a toast, because a toast
 * vanishes in seconds and private answers are mostly refusals). Public: a reply in the chat.
 */
export async function answerPress(
  c: PressCalls,
  interaction: Interaction,
  text: string,
  options: AnswerOptions,
): Promise<void> {
  const data = decodeInteraction(interaction);
  const pending = c.pendingCallbacks.delete(data.q);
  if (options.private) {
    try {
      await c.call(() =>
        c.api.answerCallbackQuery(data.q, {
          text: callbackAnswerText(text),
          show_alert: true,
        }),
      );
      return;
    } catch (err) {
      // Telegram takes an answer for about 15 s only: later, a normal reply still reaches them.
      if (!(err instanceof PhasebridgeError && isExpiredQuery(err))) throw err;
      c.log.info({}, 'telegram: callback query expired, answering with a message');
    }
  } else if (pending) await stopSpinner(c, data.q);
  const chat = pressedChat(data);
  if (options.post) {
    // Interactive: the presser waits for it (in a busy group it still waits for the limits).
    return options.post(formatChatRef(chat), {
      text: rich(text),
      replyTo: formatMessageRef(chat, [data.m]),
      urgency: 'interactive',
      key: answerKey(data.m, data.u, text),
    });
  }
  const [reply] = renderMessage({ text: rich(text) }, 1);
  await c.queues.run(String(chat.chatId), () =>
    c.call(() =>
      c.api.sendMessage(chat.chatId, reply!.html, {
        ...sendOptions(chat, undefined),
        reply_parameters: { message_id: data.m, allow_sending_without_reply: true },
      }),
    ),
  );
}

/** Sends a ForceReply prompt mentioning the presser; their reply arrives as a Reply. */
export async function askForReason(
  c: PressCalls,
  interaction: Interaction,
  prompt: string,
): Promise<string> {
  const data = decodeInteraction(interaction);
  if (c.pendingCallbacks.delete(data.q)) await stopSpinner(c, data.q);
  const chat = pressedChat(data);
  // `selective` targets users mentioned in the text, so only the presser gets the reply box.
  const mention = `<a href="tg://user?id=${data.u}">${escapeHtml(data.n)}</a>`;
  return c.queues.run(String(chat.chatId), async () => {
    const sent = await c.call(() =>
      c.api.sendMessage(chat.chatId, `${mention} ${escapeHtml(prompt)}`, {
        ...sendOptions(chat, undefined),
        reply_markup: { force_reply: true, selective: true, input_field_placeholder: 'Reason' },
      }),
    );
    return formatMessageRef(chat, [sent.message_id]);
  });
}

/** Stops the pressed button's spinner (an empty callback answer); a failure is only logged. */
function stopSpinner(c: TelegramCalls, callbackId: string): Promise<void> {
  return c
    .call(() => c.api.answerCallbackQuery(callbackId))
    .then(
      () => undefined,
      (err) => c.log.warn({ err }, 'telegram: could not answer callback query'),
    );
}
