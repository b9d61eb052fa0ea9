/**
 * The Discord driver: people in a guild text channel using slash commands, buttons and the
 * reason modal, delivered by the fake Discord's gateway (real discord.js in the bridge).
 */
import type { APIUser } from 'discord.js';
import { chatopsCommands } from '../../../src/bridges/discord/commands.ts';
import {
  FakeDiscord,
  type FakeDiscordOptions,
  type FakeInteraction,
  type StoredMessage,
} from '../../fakes/discord.ts';
import type {
  AttachedFile,
  Persona,
  PlatformDriver,
  Press,
  SeenFile,
  SeenMessage,
} from '../platform-driver.ts';
import { waitFor } from '../platform-driver.ts';

const EPHEMERAL = 64;
const PERSONAS: readonly Persona[] = ['alice', 'bob', 'carol', 'dave'];

type JsonObject = Record<string, unknown>;

/** Discord markdown to plain text: escapes and bold markers removed. */
export function plainMarkdown(text: string): string {
  return text.replace(/\*\*/g, '').replace(/\\([\\*_~`|<>[\]()#+.-])/g, '$1');
}

/**
 * The visible text of a bot message: content, embed description, fields as `Label: value`;
 * a user mention `<@id>` (in text or a field) as Discord shows it, the person's display name (from `users`).
 */
export function discordText(m: StoredMessage, users?: ReadonlyMap<string, APIUser>): string {
  const named = (t: string) =>
    t.replace(/<@(\d+)>/g, (_m, id: string) => {
      const u = users?.get(id);
      return u ? (u.global_name ?? u.username) : `<@${id}>`;
    });
  const lines = m.content === '' ? [] : [plainMarkdown(named(m.content))];
  for (const e of m.embeds as { description?: string; fields?: JsonObject[] }[]) {
    if (e.description) lines.push(plainMarkdown(named(e.description)));
    for (const f of e.fields ?? []) {
      lines.push(`${plainMarkdown(String(f.name))}: ${plainMarkdown(named(String(f.value)))}`);
    }
  }
  return lines.join('\n');
}

const buttonsOf = (m: StoredMessage): { label: string; customId: string }[] =>
  (m.components as { components?: { label?: string; custom_id?: string }[] }[]).flatMap((row) =>
    (row.components ?? []).map((b) => ({ label: String(b.label), customId: String(b.custom_id) })),
  );

/** The options of a slash command for chatops text: one word each, a text option takes the rest. */
export function slashOptions(text: string): { name: string; options: [string, string][] } {
  const [name = 'help', ...words] = text.trim().split(/\s+/);
  const spec = chatopsCommands().find((c) => c.name === name);
  const options: [string, string][] = [];
  for (const [i, o] of (spec?.options ?? []).entries()) {
    if (words.length === 0) break;
    const rest = o.kind === 'text' || i === spec!.options.length - 1;
    options.push([o.name, rest ? words.splice(0).join(' ') : words.shift()!]);
  }
  return { name, options };
}

/** Drives a fake Discord guild; PlatformDriver documents its members. */
export class DiscordDriver implements PlatformDriver {
  readonly platform = 'discord' as const;
  readonly singleUser = false;
  /** The fake, for platform-specific checks. */
  readonly fake: FakeDiscord;
  readonly chatRef: string;
  readonly #people: Record<Persona, APIUser>;

  private constructor(fake: FakeDiscord) {
    this.fake = fake;
    this.chatRef = `discord:${fake.state.guildId}:${fake.state.text.id}`;
    const people = PERSONAS.map((p) => [p, fake.state.user(p)] as const);
    this.#people = Object.fromEntries(people) as Record<Persona, APIUser>;
  }

  /** Starts the fake Discord (REST and gateway). */
  static async start(o: FakeDiscordOptions = {}): Promise<DiscordDriver> {
    // Replies as guidance need the application's Message Content intent: on unless told.
    return new DiscordDriver(
      await FakeDiscord.start({ ...o, messageContent: o.messageContent ?? true }),
    );
  }

  env(): Record<string, string> {
    return {
      DISCORD_BOT_TOKEN: this.fake.token,
      DISCORD_APPLICATION_ID: this.fake.state.applicationId,
      DISCORD_API_URL: this.fake.apiUrl,
    };
  }

  async attach(): Promise<void> {}

  userId(who: Persona): string {
    return this.#people[who].id;
  }

  displayName(who: Persona): string {
    return this.#people[who].global_name ?? this.#people[who].username;
  }

  async sendCommand(who: Persona, text: string): Promise<void> {
    const { name, options } = slashOptions(text);
    this.fake.slashCommand(this.#people[who], this.fake.state.text, name, options);
  }

  /** `/run … file:` with the file as the command's attachment option. */
  async sendCommandWithFile(who: Persona, text: string, file: AttachedFile): Promise<void> {
    const { name, options } = slashOptions(text);
    this.fake.slashCommand(this.#people[who], this.fake.state.text, name, options, [
      { name: file.name, data: file.data },
    ]);
  }

  /** Files the bot uploaded to the text channel (multipart attachments). */
  async sentFiles(): Promise<SeenFile[]> {
    const { state } = this.fake;
    return state
      .channelMessages(state.text.id)
      .filter((m) => m.author.id === state.bot.id)
      .flatMap((m) =>
        m.attachments
          .filter((a) => a.data !== undefined)
          .map((a) => ({
            name: a.filename,
            data: a.data!,
            caption: discordText(m, this.fake.state.users),
          })),
      );
  }

  /** The gateway dispatches the same INTERACTION_CREATE twice (a replay after a reconnect). */
  async deliverTwice(who: Persona, text: string): Promise<void> {
    const { name, options } = slashOptions(text);
    const registered = this.fake.state.globalCommands.find((c) => c.name === name);
    const data = {
      id: String(registered?.id ?? '1'),
      name,
      type: 1,
      options: options.map(([n, value]) => ({ name: n, type: 3, value })),
    };
    const { payload } = this.fake.state.createInteraction(
      2,
      this.#people[who],
      this.fake.state.text,
      data,
    );
    this.fake.gateway.dispatch('INTERACTION_CREATE', payload);
    this.fake.gateway.dispatch('INTERACTION_CREATE', payload);
  }

  /** Bot messages with an embed (what the bridge sends); command echoes are left out. */
  latestMessages(): SeenMessage[] {
    return this.#botMessages(this.fake.state.text.id);
  }

  /** Bot messages in the thread opened on `message` (a thread's id is its message's id). */
  repliesTo(message: SeenMessage): SeenMessage[] {
    return this.#botMessages(message.id);
  }

  /** Trigger Typing Indicator calls in the bound channel. */
  typingShown(): number {
    const { state } = this.fake;
    return state.typing.filter((id) => id === state.text.id).length;
  }

  #botMessages(channelId: string): SeenMessage[] {
    const { state } = this.fake;
    return state
      .channelMessages(channelId)
      .filter((m) => m.author.id === state.bot.id && m.embeds.length > 0)
      .map((m) => ({
        id: m.id,
        text: discordText(m, this.fake.state.users),
        buttons: buttonsOf(m).map((b) => b.label),
        edited: m.editedAt !== null,
      }));
  }

  /** A Discord reply (message_reference) to the bot's message in the channel. */
  /** `@phasebridge` alone in the channel (a MESSAGE_CREATE whose content is the mention). */
  async mentionBot(who: Persona): Promise<void> {
    const { state } = this.fake;
    this.fake.userMessage(this.#people[who], state.text, `<@${state.bot.id}>`);
  }

  async replyTo(who: Persona, message: SeenMessage, text: string): Promise<void> {
    // A reply is written where the message is: in its thread when it is in one.
    const { state } = this.fake;
    const at = state.messages.get(message.id)?.channelId;
    const channel = (at !== undefined && state.channels.get(at)) || state.text;
    const sent = this.fake.userMessage(this.#people[who], channel, text, { replyTo: message.id });
    this.#last.set(who, sent);
  }

  /** The last reply each persona sent through the driver (what `editLast` edits). */
  readonly #last = new Map<Persona, StoredMessage>();

  /** A MESSAGE_UPDATE of the persona's last reply. */
  async editLast(who: Persona, text: string): Promise<void> {
    const last = this.#last.get(who);
    if (last === undefined) throw new Error(`${who} sent nothing to edit`);
    this.fake.userEdits(last, text);
  }

  /** A Discord reply to the bot's message with the file attached (MESSAGE_CREATE attachments). */
  async replyToWithFile(
    who: Persona,
    message: SeenMessage,
    text: string,
    file: AttachedFile,
  ): Promise<void> {
    this.fake.userMessage(this.#people[who], this.fake.state.text, text, {
      replyTo: message.id,
      files: [{ name: file.name, data: file.data }],
    });
  }

  /** The bot's DMs to `who`. */
  privateNotices(who: Persona): string[] {
    const { state } = this.fake;
    const dm = [...state.channels.values()].find(
      (c) => c.kind === 'dm' && c.recipient?.id === this.#people[who].id,
    );
    if (!dm) return [];
    return state.channelMessages(dm.id).map((m) => plainMarkdown(m.content));
  }

  async press(who: Persona, message: SeenMessage, label: string): Promise<Press> {
    const stored = this.fake.state.messages.get(message.id);
    const button = stored && buttonsOf(stored).find((b) => b.label === label);
    if (!button) throw new Error(`no button "${label}" on discord message ${message.id}`);
    const interaction = this.fake.pressButton(this.#people[who], message.id, button.customId);
    return { persona: who, label, handle: interaction };
  }

  /**
   * The ephemeral answer (the initial response or a follow-up); for a reject, the words shown in
   * the reason modal (Discord shows a modal instead of an answer there).
   */
  async answerTo(press: Press): Promise<string> {
    const i = press.handle as FakeInteraction;
    const text = await waitFor(() => {
      const first = i.callbacks[0];
      if (first?.type === 4 && isEphemeral(first.data)) return String(first.data?.content);
      if (first?.type === 9 && i.modal) return modalText(i.modal);
      const followUp = i.followUps
        .map((id) => this.fake.state.messages.get(id))
        .find((m) => m !== undefined && (m.flags & EPHEMERAL) !== 0 && m.content !== '');
      return followUp?.content;
    }, 'an ephemeral answer');
    return plainMarkdown(text);
  }

  /** Submits the reason modal (opened by the press, or by the offered "Give a reason" button). */
  async replyReason(press: Press, text: string): Promise<void> {
    const i = press.handle as FakeInteraction;
    const user = this.#people[press.persona];
    const opened = await waitFor(() => {
      if (i.modal) return i;
      const offer = i.followUps
        .map((id) => this.fake.state.messages.get(id))
        .find((m) => m !== undefined && buttonsOf(m).length > 0);
      return offer && this.fake.pressButton(user, offer.id, buttonsOf(offer)[0]!.customId);
    }, 'the reason modal');
    await waitFor(() => opened.modal, 'the modal to open');
    this.fake.submitModal(user, opened, { reason: text });
  }

  async close(): Promise<void> {
    await this.fake.close();
  }
}

function isEphemeral(data: JsonObject | undefined): boolean {
  return typeof data?.flags === 'number' && (data.flags & EPHEMERAL) !== 0;
}

/** The text shown inside a modal (its text display components). */
function modalText(modal: JsonObject): string {
  const parts = (modal.components as JsonObject[])
    .filter((c) => typeof c.content === 'string')
    .map((c) => String(c.content));
  return parts.join('\n\n');
}
