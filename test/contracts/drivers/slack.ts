/**
 * The Slack driver: people in a channel using the slash command, buttons and the reason modal,
 * through the fake Slack, which signs every request and POSTs it to the bridge's own /slack/
 * route (HTTP mode), as Slack does.
 */
import { expect } from 'vitest';
import type { RunningBridge } from '../../../src/app/bridge.ts';
import { FakeSlack, type FakeUser, type Json, type StoredMessage } from '../../fakes/slack.ts';
import type {
  AttachedFile,
  Persona,
  PlatformDriver,
  Press,
  SeenFile,
  SeenMessage,
} from '../platform-driver.ts';
import { waitFor } from '../platform-driver.ts';

const PEOPLE: Readonly<Record<Persona, FakeUser>> = {
  alice: { id: 'U0ALICE', name: 'alice' },
  bob: { id: 'U0BOB', name: 'bob' },
  carol: { id: 'U0CAROL', name: 'carol' },
  dave: { id: 'U0DAVE', name: 'dave' },
};

/** The team's channel. */
export const OPS = 'C0OPS';

/** What a press needs to find what followed it. */
interface SlackPress {
  readonly userId: string;
  readonly ephemeralsBefore: number;
  readonly viewsBefore: number;
}

/** mrkdwn to plain text: bold markers, mentions as Slack shows them (`@bob`), the escapes. */
export function plainMrkdwn(text: string): string {
  const names = new Map(Object.values(PEOPLE).map((u) => [u.id, u.name]));
  return text
    .replace(/<@([A-Z0-9]+)>/g, (_m, id: string) => `@${names.get(id) ?? id}`)
    .replace(/\*([^*\n]+)\*/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** The visible text of a Block Kit message: sections, then fields as `Label: value`. */
export function slackText(m: StoredMessage): string {
  const lines: string[] = [];
  for (const block of m.blocks) {
    if (block.type !== 'section') continue;
    if (block.text) lines.push(plainMrkdwn(String(block.text.text)));
    for (const f of (block.fields ?? []) as Json[]) {
      lines.push(plainMrkdwn(String(f.text)).replace('\n', ': '));
    }
  }
  return lines.join('\n');
}

const buttonsOf = (m: StoredMessage): string[] =>
  m.blocks
    .filter((b) => b.type === 'actions')
    .flatMap((b) => b.elements as Json[])
    .map((e) => String(e.text.text));

/** Drives a fake Slack workspace; PlatformDriver documents its members. */
export class SlackDriver implements PlatformDriver {
  readonly platform = 'slack' as const;
  readonly singleUser = false;
  /** The fake, for platform-specific checks. */
  readonly fake: FakeSlack;
  readonly chatRef: string;

  private constructor(fake: FakeSlack) {
    this.fake = fake;
    this.chatRef = `slack:${fake.workspace.teamId}:${OPS}`;
  }

  /** Starts the fake Slack. */
  static async start(): Promise<SlackDriver> {
    return new SlackDriver(await FakeSlack.start());
  }

  env(): Record<string, string> {
    return {
      SLACK_BOT_TOKEN: this.fake.botToken,
      SLACK_SIGNING_SECRET: this.fake.signingSecret,
      SLACK_API_URL: this.fake.apiUrl,
    };
  }

  /** Slack posts to the bridge's /slack/ route (the port changes with each start). */
  async attach(bridge: RunningBridge): Promise<void> {
    this.fake.target = `${bridge.url}/slack/events`;
  }

  userId(who: Persona): string {
    return PEOPLE[who].id;
  }

  displayName(who: Persona): string {
    return `@${PEOPLE[who].name}`;
  }

  /** The fake user of a persona. */
  user(who: Persona): FakeUser {
    return PEOPLE[who];
  }

  async sendCommand(who: Persona, text: string): Promise<void> {
    const delivery = await this.fake.sendCommand({ user: PEOPLE[who], channel: OPS, text });
    expect(delivery.status).toBe(200);
  }

  /** Slack's redelivery of the same request, marked with X-Slack-Retry-Num. */
  async deliverTwice(who: Persona, text: string): Promise<void> {
    const first = await this.fake.sendCommand({ user: PEOPLE[who], channel: OPS, text });
    const retry = await this.fake.deliver(first.request, 1);
    expect([first.status, retry.status]).toEqual([200, 200]);
  }

  latestMessages(): SeenMessage[] {
    return (this.fake.messages.get(OPS) ?? [])
      .filter((m) => !m.deleted)
      .map((m) => ({ id: m.ts, text: slackText(m), buttons: buttonsOf(m), edited: m.edits > 0 }));
  }

  /** Replies in the thread under `message` (their `thread_ts` is its ts). */
  repliesTo(message: SeenMessage): SeenMessage[] {
    return (this.fake.messages.get(OPS) ?? [])
      .filter((m) => !m.deleted && m.threadTs === message.id)
      .map((m) => ({ id: m.ts, text: slackText(m), buttons: buttonsOf(m), edited: m.edits > 0 }));
  }

  async press(who: Persona, message: SeenMessage, label: string): Promise<Press> {
    const handle: SlackPress = {
      userId: PEOPLE[who].id,
      ephemeralsBefore: this.fake.ephemerals.length,
      viewsBefore: this.fake.views.length,
    };
    const delivery = await this.fake.pressButton({
      user: PEOPLE[who],
      channel: OPS,
      ts: message.id,
      label,
    });
    expect(delivery.status).toBe(200);
    return { persona: who, label, handle };
  }

  /** The ephemeral message only the presser sees. */
  async answerTo(press: Press): Promise<string> {
    const { userId, ephemeralsBefore } = press.handle as SlackPress;
    const answer = await waitFor(
      () => this.fake.ephemerals.slice(ephemeralsBefore).find((e) => e.user === userId),
      'an ephemeral answer',
    );
    expect(answer.channel).toBe(OPS);
    return plainMrkdwn(String(answer.text));
  }

  /** Submits the modal the press opened. */
  async replyReason(press: Press, text: string): Promise<void> {
    const { viewsBefore } = press.handle as SlackPress;
    const view = await waitFor(() => this.fake.views[viewsBefore], 'the reason modal');
    const delivery = await this.fake.submitView({
      user: PEOPLE[press.persona],
      viewId: view.id,
      value: text,
    });
    expect(delivery.status).toBe(200);
  }

  /** A thread reply under the message (Slack has no reply-to-message: the thread is the reply). */
  /** `@phasebridge` alone in the channel (an app_mention with no words). */
  async mentionBot(who: Persona): Promise<void> {
    const delivery = await this.fake.sendMention({ user: PEOPLE[who], channel: OPS, text: '' });
    expect(delivery.status).toBe(200);
  }

  async replyTo(who: Persona, message: SeenMessage, text: string): Promise<void> {
    // A reply to a message in a thread goes in that thread (Slack threads have one level).
    const parent = (this.fake.messages.get(OPS) ?? []).find((m) => m.ts === message.id)?.threadTs;
    const threadTs = parent ?? message.id;
    const delivery = await this.fake.sendThreadReply({
      user: PEOPLE[who],
      channel: OPS,
      threadTs,
      text,
    });
    expect(delivery.status).toBe(200);
    const ts = String((delivery.request.payload.event as { ts?: unknown }).ts);
    this.#last.set(who, { ts, threadTs });
  }

  /** The last reply each persona sent through the driver (what `editLast` edits). */
  readonly #last = new Map<Persona, { ts: string; threadTs: string }>();

  /** A `message_changed` of the persona's last thread reply. */
  async editLast(who: Persona, text: string): Promise<void> {
    const last = this.#last.get(who);
    if (last === undefined) throw new Error(`${who} sent nothing to edit`);
    const delivery = await this.fake.editMessage({
      user: PEOPLE[who],
      channel: OPS,
      text,
      ...last,
    });
    expect(delivery.status).toBe(200);
  }

  /** A thread reply under the message sharing the file (a `file_share` message event). */
  async replyToWithFile(
    who: Persona,
    message: SeenMessage,
    text: string,
    file: AttachedFile,
  ): Promise<void> {
    const delivery = await this.fake.sendThreadReply({
      user: PEOPLE[who],
      channel: OPS,
      threadTs: message.id,
      text,
      files: [{ name: file.name, data: file.data }],
    });
    expect(delivery.status).toBe(200);
  }

  /** `@phasebridge <text>` with the file shared in the same message. */
  async sendCommandWithFile(who: Persona, text: string, file: AttachedFile): Promise<void> {
    const delivery = await this.fake.sendMention({
      user: PEOPLE[who],
      channel: OPS,
      text,
      files: [{ name: file.name, data: file.data }],
    });
    expect(delivery.status).toBe(200);
  }

  /** Ephemeral messages to `who` that answered no press are the same list: all of them. */
  privateNotices(who: Persona): string[] {
    return this.fake.ephemerals
      .filter((e) => e.user === PEOPLE[who].id)
      .map((e) => plainMrkdwn(String(e.text)));
  }

  /** Files uploaded and shared to the channel (files.completeUploadExternal done). */
  async sentFiles(): Promise<SeenFile[]> {
    return this.fake.api.files
      .filter((f) => f.data !== undefined && f.params.channel_id === OPS)
      .map((f) => ({
        name: f.name ?? '',
        data: f.data!,
        caption: plainMrkdwn(String(f.params.initial_comment ?? '')),
      }));
  }

  async close(): Promise<void> {
    await this.fake.close();
  }
}
