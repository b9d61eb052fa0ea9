/**
 * Answers to a button press, and the reason dialog, with Slack's own limits in mind:
 * - a private answer is an ephemeral; where Slack refuses one, the press's response_url; when
 *   that is spent too (30 minutes, 5 posts), a message in the chat naming the presser;
 * - the reason dialog needs the press's trigger_id within 3 s; when Slack says it expired, the
 *   question is asked in the pressed message's thread instead, and the presser's
 *   `@phasebridge <reason>` there comes back as the Reply (fromPromptAnswer); the question is
 *   kept in the channel state store (thread-prompts.ts), so the answer counts after a restart.
 */
import type { App } from '@slack/bolt';
import { PhasebridgeError, PlatformError } from '../../errors.ts';
import type { AnswerOptions, ChannelLogger, ReasonAsk } from '../channel.ts';
import type { Interaction } from '../events.ts';
import type { RichText } from '../messages.ts';
import { plain, plainTextOf, rich } from '../render-text.ts';
import type { ChannelStateStore } from '../state.ts';
import { isSpentResponseUrl, isSpentTrigger, slackErrorCode } from './errors.ts';
import { threadPromptKey } from './inbound.ts';
import {
  answerKey,
  formatChatRef,
  formatMessageRef,
  formatPromptRef,
  reasonModal,
  renderMrkdwn,
  type SlackChat,
} from './outbound.ts';
import type { PressUrls } from './press-urls.ts';
import { decodeInteraction, type InteractionData, promptMetadata } from './presses.ts';
import { postToResponseUrl } from './response-url.ts';
import { ThreadPrompts } from './thread-prompts.ts';

/** A private answer falls back to the response_url when the bot cannot post ephemerals there. */
const EPHEMERAL_FALLBACK = new Set(['not_in_channel', 'channel_not_found', 'user_not_in_channel']);
/** Longest one-line answer; Slack itself truncates `text` at 40 000 characters. */
const MAX_ANSWER_LENGTH = 3000;

/** What the channel lends these helpers. */
export interface SlackCalls {
  readonly client: App['client'];
  /** Runs one Web API call with the channel's 429 retries and error translation. */
  call<T>(method: string, run: () => Promise<T>): Promise<T>;
  /** Runs `work` in the conversation's queue (one post at a time per channel). */
  queue<T>(channel: string, work: () => Promise<T>): Promise<T>;
  /** Where response_urls may point. */
  readonly origins: ReadonlySet<string>;
  /** Uses of recent presses' response_urls (an answer posted there counts against Slack's 5). */
  readonly pressUrls?: PressUrls;
  readonly log: ChannelLogger;
  /** Our bot user id, once started. */
  botUserId(): string | undefined;
  /** Where reasons asked in threads are kept (bridge.db's `channel_state`); default memory. */
  readonly state?: ChannelStateStore;
}

/** Button-press answers and reason prompts of one Slack channel. */
export class SlackInteractions {
  readonly #s: SlackCalls;
  /** Reasons asked in a thread, awaiting the person's answer there. */
  readonly #threadPrompts: ThreadPrompts;

  /** Keeps the channel's calls. */
  constructor(calls: SlackCalls) {
    this.#s = calls;
    this.#threadPrompts = new ThreadPrompts(calls.state, calls.log);
  }

  /** Finds and forgets the prompt a thread reply answers (for fromPromptAnswer). */
  get takeThreadPrompt(): ThreadPrompts['take'] {
    return this.#threadPrompts.take;
  }

  /** See SlackChannel.whisper. */
  async whisper(chat: SlackChat, user: string, text: string): Promise<void> {
    await this.#call('chat.postEphemeral', () =>
      this.#s.client.chat.postEphemeral({
        channel: chat.channel,
        user,
        text: renderMrkdwn(rich(text.slice(0, MAX_ANSWER_LENGTH))),
        ...(chat.thread !== undefined && { thread_ts: chat.thread }),
      }),
    );
  }

  /** See SlackChannel.answer. */
  async answer(interaction: Interaction, text: string, options: AnswerOptions): Promise<void> {
    const data = decodeInteraction(interaction);
    const clipped = text.slice(0, MAX_ANSWER_LENGTH);
    const mrkdwn = renderMrkdwn(rich(clipped));
    if (!options.private) return this.#inChat(data, [plain(clipped)], options);
    try {
      await this.#call('chat.postEphemeral', () =>
        this.#s.client.chat.postEphemeral({
          channel: data.chat.channel,
          user: data.u,
          text: mrkdwn,
          ...(data.chat.thread !== undefined && { thread_ts: data.chat.thread }),
        }),
      );
      return;
    } catch (err) {
      const code = err instanceof PhasebridgeError ? slackErrorCode(err) : undefined;
      if (code === undefined || !EPHEMERAL_FALLBACK.has(code)) throw err;
    }
    if (data.r !== undefined) {
      this.#s.pressUrls?.spend(data.r);
      try {
        await postToResponseUrl(
          data.r,
          { response_type: 'ephemeral', replace_original: false, text: mrkdwn },
          this.#s.origins,
        );
        return;
      } catch (err) {
        if (!isSpentResponseUrl(err)) throw err;
        this.#s.pressUrls?.forget(data.r);
        this.#s.log.info({ err }, 'slack: response_url spent, answering in the chat');
      }
    }
    // Nothing private is left: the presser still gets the answer, addressed to them.
    const presser = { kind: 'mention', text: `@${data.u}`, platform: 'slack', id: data.u } as const;
    await this.#inChat(data, [presser, plain(` ${clipped}`)], options);
  }

  /**
   * An answer that has to be a message in the chat (where the pressed message is): through the
   * outbox when the channel has one (`options.post`: paced, and keyed by the pressed message, the
   * presser and the words, so a press pressed again or redelivered posts it once), else straight.
   */
  async #inChat(
    data: InteractionData & { chat: SlackChat },
    text: RichText,
    options: AnswerOptions,
  ): Promise<void> {
    if (options.post) {
      // Interactive: the presser waits for it.
      return options.post(formatChatRef(data.chat), {
        text,
        urgency: 'interactive',
        key: answerKey(data.m, data.u, plainTextOf(text)),
      });
    }
    await this.#post(data.chat, renderMrkdwn(text));
  }

  /** See SlackChannel.askForReason. */
  async askForReason(interaction: Interaction, prompt: string, ask?: ReasonAsk): Promise<string> {
    const data = decodeInteraction(interaction);
    try {
      const opened = await this.#call('views.open', () =>
        this.#s.client.views.open({
          trigger_id: data.g,
          view: reasonModal(prompt, promptMetadata(data.chat), ask),
        }),
      );
      const viewId = opened.view?.id;
      if (!viewId) throw new PlatformError('slack', 'views.open returned no view id');
      return formatPromptRef(data.chat, viewId);
    } catch (err) {
      if (!(err instanceof PhasebridgeError) || !isSpentTrigger(err)) throw err;
      this.#s.log.info({ err }, 'slack: reason dialog too late, asking in the thread');
    }
    return this.#askInThread(data, prompt, ask?.optional === true);
  }

  /**
   * Asks in the pressed message's thread; the presser's next mention there is the answer. An
   * optional answer says how to leave it empty: a mention alone (a thread message cannot be empty).
   */
  async #askInThread(
    data: InteractionData & { chat: SlackChat },
    prompt: string,
    optional: boolean,
  ): Promise<string> {
    const thread = data.chat.thread ?? data.m;
    const where: SlackChat = { ...data.chat, thread };
    const bot = this.#s.botUserId();
    const how =
      bot === undefined ? 'Reply in this thread' : `Reply in this thread with <@${bot}> and`;
    const empty =
      optional && bot !== undefined ? `, or with <@${bot}> alone to leave it empty` : '';
    const text = `<@${data.u}> ${renderMrkdwn(rich(prompt))}\n${how} your answer${empty}.`;
    const ts = await this.#post(where, text);
    const promptRef = formatMessageRef(where, [ts]);
    const key = threadPromptKey(where.channel, thread, data.u);
    const kept = { promptRef, chatRef: data.c, ...(optional && { optional: true }) };
    await this.#threadPrompts.put(key, kept);
    return promptRef;
  }

  /** One Web API call through the channel (named here so the scopes test sees every method). */
  #call<T>(method: string, run: () => Promise<T>): Promise<T> {
    return this.#s.call(method, run);
  }

  /** Posts mrkdwn text where `chat` says (its thread, if any); returns the message ts. */
  async #post(chat: SlackChat, mrkdwn: string): Promise<string> {
    const sent = await this.#s.queue(chat.channel, () =>
      this.#call('chat.postMessage', () =>
        this.#s.client.chat.postMessage({
          channel: chat.channel,
          text: mrkdwn,
          ...(chat.thread !== undefined && { thread_ts: chat.thread }),
        }),
      ),
    );
    if (!sent.ts) throw new PlatformError('slack', 'chat.postMessage returned no ts');
    return sent.ts;
  }
}
