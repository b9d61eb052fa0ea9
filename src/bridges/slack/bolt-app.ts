/**
 * The Bolt app behind the Slack channel: Socket Mode when an app token is set, otherwise HTTP
 * through our own receiver; and its listeners, which ack first and turn Slack's payloads into
 * neutral events (inbound.ts, presses.ts) for the channel to deliver.
 */
import { App } from '@slack/bolt';
import type { ChannelLogger } from '../channel.ts';
import type { InboundEvent } from '../events.ts';
import { fromMessageEdit } from './edits.ts';
import { toSlackError } from './errors.ts';
import {
  type BotContext,
  fromDirectMessage,
  fromMention,
  fromPromptAnswer,
  fromSlashCommand,
  fromThreadReply,
  type MentionPayload,
  type MessagePayload,
} from './inbound.ts';
import type { SlackInteractions } from './interactions.ts';
import { DEFAULT_WEB_CLIENT_RETRIES, type SlackChannelOptions } from './options.ts';
import { REASON_CALLBACK_ID } from './outbound.ts';
import type { PressUrls } from './press-urls.ts';
import {
  type BlockActionsPayload,
  fromBlockAction,
  fromViewSubmission,
  type ViewSubmissionPayload,
} from './presses.ts';
import { boltLogger, SlackHttpReceiver } from './receiver.ts';

/** The Bolt app for `options`, with the HTTP receiver when there is no app token (Socket Mode). */
export function createSlackApp(
  options: SlackChannelOptions,
  log: ChannelLogger,
): { app: App; receiver: SlackHttpReceiver | undefined } {
  // Bolt writes its logger into clientOptions, so each app gets a fresh object.
  const clientOptions = {
    ...(options.apiUrl !== undefined && { slackApiUrl: options.apiUrl }),
    retryConfig: { ...(options.webClientRetries ?? DEFAULT_WEB_CLIENT_RETRIES) },
    // 429s come back to us (../delivery.ts) instead of pausing the WebClient's shared queue.
    rejectRateLimitedCalls: true,
    timeout: 30_000,
  };
  const common = {
    token: options.botToken,
    logger: boltLogger(log),
    clientOptions,
    // start() runs auth.test itself; nothing may call Slack from a constructor.
    deferInitialization: true,
  };
  if (options.appToken !== undefined) {
    const app = new App({ ...common, appToken: options.appToken, socketMode: true });
    return { app, receiver: undefined };
  }
  const receiver = new SlackHttpReceiver({
    signingSecret: options.signingSecret ?? '',
    now: options.now ?? Date.now,
    log,
  });
  return { app: new App({ ...common, receiver }), receiver };
}

/** What the listeners need from the channel. */
export interface ListenerHooks {
  /** The bot's workspace and user, once start() has read them (events before are dropped). */
  readonly bot: () => BotContext | undefined;
  /** Hands an event to the channel's handler. */
  readonly deliver: (event: InboundEvent) => Promise<void>;
  /** Reason prompts asked in a thread, answered by a reply there. */
  readonly interactions: SlackInteractions;
  /** Where a press's response_url is kept for the pressed message's edit. */
  readonly pressUrls: PressUrls;
  /** The slash command the app answers. */
  readonly command: string;
  readonly log: ChannelLogger;
}

/** Registers the listeners for commands, mentions, messages, button presses and modal submits. */
export function listenForEvents(app: App, hooks: ListenerHooks): void {
  app.command(/.*/, async ({ command, ack }) => {
    const bot = hooks.bot();
    const event = bot && fromSlashCommand(command, bot);
    await ack(event ? undefined : `This app answers ${hooks.command} only.`);
    if (event) await hooks.deliver(event);
  });
  app.event('app_mention', async ({ body }) => {
    const payload = body as unknown as MentionPayload;
    const bot = hooks.bot();
    const event =
      bot &&
      ((await fromPromptAnswer(payload, bot, hooks.interactions.takeThreadPrompt)) ??
        fromMention(payload, bot));
    if (event) await hooks.deliver(event);
  });
  // Thread replies under our run messages (guidance, or a reason asked there); needs
  // message.channels / message.groups. A direct message to the app (message.im) is DirectText.
  app.event('message', async ({ body }) => {
    const payload = body as unknown as MessagePayload;
    const bot = hooks.bot();
    const direct = bot && fromDirectMessage(payload, bot);
    if (direct) return hooks.deliver(direct);
    // An edit is never applied; chatops answers it when the message was for us (issue 29).
    const edit = bot && fromMessageEdit(payload, bot);
    if (edit) return hooks.deliver(edit);
    const reply = bot && fromThreadReply(payload, bot);
    // A reply without our mention may still answer a reason asked in that thread.
    const event =
      reply &&
      ((await fromPromptAnswer(payload, bot, hooks.interactions.takeThreadPrompt)) ?? reply);
    if (event) await hooks.deliver(event);
  });
  app.action({ type: 'block_actions' }, async ({ ack, body, action }) => {
    await ack();
    const actionId = 'action_id' in action ? action.action_id : undefined;
    const payload = body as unknown as BlockActionsPayload;
    const bot = hooks.bot();
    const event = bot && actionId && fromBlockAction(payload, actionId, bot);
    const channel = payload.channel?.id ?? payload.container?.channel_id;
    const ts = payload.message?.ts ?? payload.container?.message_ts;
    if (event && channel && ts && payload.response_url) {
      hooks.pressUrls.record(channel, ts, payload.response_url);
    }
    if (event) await hooks.deliver(event);
  });
  app.view(REASON_CALLBACK_ID, async ({ ack, body }) => {
    await ack();
    const event = fromViewSubmission(body as unknown as ViewSubmissionPayload);
    if (event) await hooks.deliver(event);
  });
  app.error(async (err) => {
    hooks.log.error({ err: toSlackError(err) }, 'slack: listener failed');
  });
}
