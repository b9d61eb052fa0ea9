/**
 * The chat platforms a chaos run (chaos.ts) drives `serve` through, each over its fake: how a
 * person sends `/run`, what the bot's messages show (buttons live or not), how a person presses
 * Approve, and every message the bot sent (for duplicates). Telegram redelivers the updates a
 * killed serve had not confirmed; Slack (Socket Mode) and Discord (gateway) do not: a command
 * sent to a dying serve is lost to it, and the person, seeing no answer, types it again.
 */
import type { APIUser } from 'discord.js';
import { discordText, slashOptions } from '../contracts/drivers/discord.ts';
import { FakeDiscord } from '../fakes/discord.ts';
import { FakeSlack, type Json, type FakeUser as SlackUser } from '../fakes/slack.ts';
import { FakeTelegram, type FakeUser, type StoredMessage } from '../fakes/telegram.ts';
import type { FakeChat } from '../fakes/telegram-wire.ts';

/** The platforms a chaos run can use. */
export type ChaosPlatformName = 'telegram' | 'slack' | 'discord';

/** One bound chat of the run and the person acting in it. */
export interface ChaosChat {
  /** The chat ref bound to the chat's workspace. */
  readonly ref: string;
  /** The person's platform user id (allowlisted as approver). */
  readonly userId: string;
}

/** A bot message as a person sees it now. */
export interface ChaosMessage {
  readonly id: string;
  readonly text: string;
  /** Shows an Approve button. */
  readonly approve: boolean;
  /** Shows any button at all. */
  readonly live: boolean;
}

/** A sent `/run`: `answered` turns true once the person can see the bridge took it (always where updates are redelivered). */
export interface SentRun {
  answered(): boolean;
}

/** One platform's fake, as the chaos run uses it. */
export interface ChaosPlatform {
  readonly name: ChaosPlatformName;
  /** Updates sent while serve is down reach the next serve (Telegram's getUpdates). */
  readonly redelivers: boolean;
  /** Creates (or names) chat `i` of the run. */
  chat(i: number, groups: boolean): ChaosChat;
  /** serve's env pointing it at the fake. */
  env(): Record<string, string>;
  /** The person of `chat` sends `/run demo <spec>`. */
  run(chat: ChaosChat, spec: string): SentRun;
  /** The bot's messages in `chat`, oldest first. */
  messages(chat: ChaosChat): ChaosMessage[];
  /** The person presses Approve on `id` (throws when the button is gone). */
  press(chat: ChaosChat, id: string): void;
  /** Every message the bot sent: chat ref and text as sent. */
  sends(): { chat: string; text: string }[];
  close(): Promise<void>;
}

/** Starts the fake of `name`. */
export async function chaosPlatform(name: ChaosPlatformName): Promise<ChaosPlatform> {
  if (name === 'slack') return new SlackChaos(await FakeSlack.start());
  if (name === 'discord')
    return new DiscordChaos(await FakeDiscord.start({ messageContent: true }));
  return new TelegramChaos(await FakeTelegram.start());
}

const buttons = (m: StoredMessage): { text: string }[] =>
  ((m.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat();

class TelegramChaos implements ChaosPlatform {
  readonly name = 'telegram' as const;
  readonly redelivers = true;
  readonly #chats = new Map<string, { chat: FakeChat; user: FakeUser }>();
  constructor(readonly fake: FakeTelegram) {}

  chat(i: number, groups: boolean): ChaosChat {
    const user: FakeUser = { id: 7001 + i, first_name: `U${i}`, username: `u${i}` };
    const chat: FakeChat = groups
      ? { id: -1001 - i, type: 'supergroup', title: `G${i}` }
      : { id: user.id, type: 'private' };
    this.fake.addChat(chat);
    const ref = `telegram:${chat.id}`;
    this.#chats.set(ref, { chat, user });
    return { ref, userId: String(user.id) };
  }

  env(): Record<string, string> {
    return { TELEGRAM_BOT_TOKEN: this.fake.token, TELEGRAM_API_ROOT: this.fake.apiRoot };
  }

  run(c: ChaosChat, spec: string): SentRun {
    const { chat, user } = this.#chats.get(c.ref)!;
    this.fake.userSends({ chat, from: user, text: `/run demo ${spec}` });
    return { answered: () => true };
  }

  messages(c: ChaosChat): ChaosMessage[] {
    const { chat } = this.#chats.get(c.ref)!;
    return this.fake.botMessages(chat.id).map((m) => ({
      id: String(m.message_id),
      text: m.text ?? '',
      approve: buttons(m).some((b) => b.text === 'Approve'),
      live: buttons(m).length > 0,
    }));
  }

  press(c: ChaosChat, id: string): void {
    const { chat, user } = this.#chats.get(c.ref)!;
    const press = { chatId: chat.id, messageId: Number(id), from: user, label: 'Approve' };
    this.fake.userPresses(press);
  }

  sends(): { chat: string; text: string }[] {
    // A reply (a press's answer after the callback window) is about the message it replies to:
    // the same words answering two runs' checkpoints are two messages, not one sent twice.
    return this.fake.okCalls('sendMessage').map((call) => {
      const to = (call.params.reply_parameters as { message_id?: number } | undefined)?.message_id;
      return {
        chat: `telegram:${String(call.params.chat_id)}`,
        text: `${String(call.params.text)}${to === undefined ? '' : ` ↩ ${to}`}`,
      };
    });
  }

  close(): Promise<void> {
    return this.fake.close();
  }
}

/** The visible text of a Block Kit message (sections and fields), markers left in. */
const blockText = (blocks: Json[]): string =>
  blocks
    .filter((b) => b.type === 'section')
    .flatMap((b) => [
      ...(b.text ? [String(b.text.text)] : []),
      ...((b.fields ?? []) as Json[]).map((f) => String(f.text)),
    ])
    .join('\n')
    .replace(/\*/g, '');

const slackButtons = (blocks: Json[]): string[] =>
  blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements as Json[])
    .map((e) => String(e.text.text));

class SlackChaos implements ChaosPlatform {
  readonly name = 'slack' as const;
  readonly redelivers = false;
  readonly #users = new Map<string, SlackUser>();
  constructor(readonly fake: FakeSlack) {}

  chat(i: number): ChaosChat {
    const channel = `C0CHAOS${i}`;
    const user: SlackUser = { id: `U0CHAOS${i}`, name: `u${i}` };
    const ref = `slack:${this.fake.workspace.teamId}:${channel}`;
    this.#users.set(ref, user);
    return { ref, userId: user.id };
  }

  env(): Record<string, string> {
    return {
      SLACK_BOT_TOKEN: this.fake.botToken,
      SLACK_SIGNING_SECRET: this.fake.signingSecret,
      SLACK_APP_TOKEN: this.fake.appToken,
      SLACK_API_URL: this.fake.apiUrl,
    };
  }

  run(c: ChaosChat, spec: string): SentRun {
    const channel = channelOf(c);
    this.fake
      .sendCommand({ user: this.#users.get(c.ref)!, channel, text: `run demo ${spec}` })
      .catch(() => undefined); // serve is down: no Socket Mode connection
    return shownRun(this, c, spec);
  }

  messages(c: ChaosChat): ChaosMessage[] {
    return (this.fake.messages.get(channelOf(c)) ?? [])
      .filter((m) => !m.deleted && m.threadTs === undefined)
      .map((m) => ({
        id: m.ts,
        text: blockText(m.blocks) || m.text,
        approve: slackButtons(m.blocks).includes('Approve'),
        live: slackButtons(m.blocks).length > 0,
      }));
  }

  press(c: ChaosChat, id: string): void {
    const user = this.#users.get(c.ref)!;
    this.fake
      .pressButton({ user, channel: channelOf(c), ts: id, label: 'Approve' })
      .catch(() => undefined);
  }

  sends(): { chat: string; text: string }[] {
    return this.fake.okCalls('chat.postMessage').map((call) => ({
      chat: `slack:${this.fake.workspace.teamId}:${String(call.params.channel)}`,
      text: call.params.blocks
        ? blockText(parseBlocks(call.params.blocks))
        : String(call.params.text),
    }));
  }

  close(): Promise<void> {
    return this.fake.close();
  }
}

const channelOf = (c: ChaosChat): string => c.ref.split(':')[2]!;

/**
 * Answered once the chat shows the run (its status message names the run, whose id ends in the
 * spec's slug): Slack's ack and Discord's deferral come before the run is committed and show a
 * person nothing, so a kill after them leaves the person with no answer, and they type it again.
 */
function shownRun(p: ChaosPlatform, c: ChaosChat, spec: string): SentRun {
  const named = new RegExp(`Run \\S+-${spec}(?![\\w-])`);
  let shown = false;
  return {
    answered: () => {
      shown ||= p.messages(c).some((m) => named.test(m.text));
      return shown;
    },
  };
}
const parseBlocks = (b: unknown): Json[] => (typeof b === 'string' ? JSON.parse(b) : b) as Json[];

type DiscordButton = { label?: string; custom_id?: string };
const discordButtons = (components: unknown[]): DiscordButton[] =>
  (components as { components?: DiscordButton[] }[]).flatMap((r) => r.components ?? []);

class DiscordChaos implements ChaosPlatform {
  readonly name = 'discord' as const;
  readonly redelivers = false;
  readonly #users = new Map<string, APIUser>();
  constructor(readonly fake: FakeDiscord) {}

  /** One text channel: the fake guild has one (every run of the chaos shares it). */
  chat(i: number): ChaosChat {
    if (i > 0) throw new Error('chaos on discord: one chat (the fake guild has one text channel)');
    const { state } = this.fake;
    const user = state.user('alice');
    const ref = `discord:${state.guildId}:${state.text.id}`;
    this.#users.set(ref, user);
    return { ref, userId: user.id };
  }

  env(): Record<string, string> {
    return {
      DISCORD_BOT_TOKEN: this.fake.token,
      DISCORD_APPLICATION_ID: this.fake.state.applicationId,
      DISCORD_API_URL: this.fake.apiUrl,
    };
  }

  run(c: ChaosChat, spec: string): SentRun {
    // Not connected (serve down or not yet identified): Discord tells the person it failed.
    if (!this.fake.gateway.connected || !this.#registered()) return { answered: () => false };
    const { name, options } = slashOptions(`run demo ${spec}`);
    try {
      this.fake.slashCommand(this.#users.get(c.ref)!, this.fake.state.text, name, options);
    } catch {
      return { answered: () => false };
    }
    return shownRun(this, c, spec);
  }

  #registered(): boolean {
    return this.fake.state.globalCommands.some((cmd) => cmd.name === 'run');
  }

  messages(): ChaosMessage[] {
    const { state } = this.fake;
    return state
      .channelMessages(state.text.id)
      .filter((m) => m.author.id === state.bot.id && m.embeds.length > 0)
      .map((m) => {
        const b = discordButtons(m.components);
        return {
          id: m.id,
          text: discordText(m),
          approve: b.some((x) => x.label === 'Approve'),
          live: b.length > 0,
        };
      });
  }

  press(c: ChaosChat, id: string): void {
    if (!this.fake.gateway.connected) return;
    const m = this.fake.state.messages.get(id);
    const button = m && discordButtons(m.components).find((b) => b.label === 'Approve');
    if (!button?.custom_id) throw new Error('the buttons went');
    this.fake.pressButton(this.#users.get(c.ref)!, id, button.custom_id);
  }

  sends(): { chat: string; text: string }[] {
    const { state } = this.fake;
    const nonces = new Set<string>();
    return this.fake.okCalls('POST', /^\/channels\/\d+\/messages$/).flatMap((call) => {
      // The whole of what was sent (content, embeds): two sends alike in every part are a repeat.
      const body = (call.body ?? {}) as {
        content?: string;
        embeds?: unknown[];
        nonce?: string;
        enforce_nonce?: boolean;
      };
      // A resend Discord answered with the message it had (enforce_nonce) posted nothing.
      const nonce = body.enforce_nonce === true ? `${call.path}:${body.nonce}` : undefined;
      if (nonce !== undefined && nonces.has(nonce)) return [];
      if (nonce !== undefined) nonces.add(nonce);
      const text = JSON.stringify([body.content ?? '', body.embeds ?? []]);
      return [{ chat: `discord:${state.guildId}:${call.path.split('/')[2]}`, text }];
    });
  }

  close(): Promise<void> {
    return this.fake.close();
  }
}
