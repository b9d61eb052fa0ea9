/**
 * The Telegram channel in long-polling mode, through the real grammY client against the fake
 * Bot API server.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ButtonPress, Command, InboundEvent, Reply } from '../../../src/bridges/events.ts';
import { bold, code, link, rich } from '../../../src/bridges/render-text.ts';
import type { TelegramChannel } from '../../../src/bridges/telegram/index.ts';
import { ChatUnreachableError, PlatformError, RateLimitedError } from '../../../src/errors.ts';
import { parseTelegramHtml } from '../../fakes/telegram.ts';
import {
  ALICE,
  ALICE_DM,
  channelFor,
  FakeTelegram,
  FORUM,
  Inbox,
  recordingLogger,
} from './support.ts';

let fake: FakeTelegram;
let channel: TelegramChannel;
let inbox: Inbox;
let logger: ReturnType<typeof recordingLogger>;
/** What the handler does with each event before it lands in the inbox. */
let react: (event: InboundEvent) => Promise<void>;

beforeEach(async () => {
  fake = await FakeTelegram.start();
  fake.addChat(ALICE_DM);
  fake.addChat(FORUM);
  inbox = new Inbox();
  react = async () => {};
  logger = recordingLogger();
  channel = channelFor(fake, { retry: { maxRetries: 8, maxWaitMs: 2_000 }, logger });
  await channel.start(async (event) => {
    await react(event);
    inbox.push(event);
  });
});

afterEach(async () => {
  await channel.stop();
  await fake.close();
});

const lastId = (ref: string) => Number(ref.split('/')[1]!.split(',').at(-1));

describe('TelegramChannel (long polling)', () => {
  it('registers the caller’s commands on start', () => {
    expect(fake.commands.map((c) => c.command)).toEqual(['run', 'status']);
    expect(fake.okCalls('getMe')).toHaveLength(1);
  });

  it('sends HTML with an inline keyboard, escaping user text, and edits it in place', async () => {
    const ref = await channel.send('telegram:501', {
      text: rich(
        bold('Run <script>alert(1)</script>'),
        ' & ',
        code('a<b'),
        ' ',
        link('log', 'https://x.test/?a=1&b="2"'),
      ),
      fields: [{ label: 'Phase', value: 'B <build>' }],
      buttons: [
        { id: 'tok-approve', label: 'Approve', style: 'primary' },
        { id: 'tok-reject', label: 'Reject', style: 'danger' },
      ],
    });
    const sent = fake.message(501, lastId(ref))!;
    expect(sent.rawText).toContain(
      '<b>Run &lt;script&gt;alert(1)&lt;/script&gt;</b> &amp; <code>a&lt;b</code>',
    );
    expect(sent.rawText).toContain('<a href="https://x.test/?a=1&amp;b=&quot;2&quot;">log</a>');
    expect(sent.text).toBe('Run <script>alert(1)</script> & a<b log\n\nPhase: B <build>');
    expect(sent.replyMarkup).toEqual({
      inline_keyboard: [
        [
          { text: 'Approve', callback_data: 'tok-approve', style: 'primary' },
          { text: 'Reject', callback_data: 'tok-reject', style: 'danger' },
        ],
      ],
    });

    await channel.edit(ref, { text: rich('Approved by ', bold('@alice')) });
    const edited = fake.message(501, lastId(ref))!;
    expect(edited.text).toBe('Approved by @alice');
    expect(edited.replyMarkup).toEqual({ inline_keyboard: [] });
    expect(edited.edits).toBe(1);
    // Editing to the same content is not an error.
    await channel.edit(ref, { text: rich('Approved by ', bold('@alice')) });
  });

  it('delivers a /command with its arguments, and ignores /cmd@otherbot', async () => {
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/run@otherbot nope' });
    fake.userSends({
      chat: ALICE_DM,
      from: ALICE,
      text: '/Run@Phasebridge_Bot  add-login  --workflow pabcd',
    });
    const event = (await inbox.next()) as Command;
    expect(event).toMatchObject({
      kind: 'command',
      name: 'run',
      args: ['add-login', '--workflow', 'pabcd'],
      chatRef: 'telegram:501',
      user: { platform: 'telegram', id: '501', display: '@alice' },
    });
    expect(event.idempotencyKey).toMatch(/^telegram:msg:501:\d+$/);
    expect(inbox.all).toHaveLength(1);
  });

  it('turns a button press into a ButtonPress and answer() reaches answerCallbackQuery', async () => {
    const ref = await channel.send('telegram:501', {
      text: rich('Checkpoint'),
      buttons: [{ id: 'opaque-token-1', label: 'Approve' }],
    });
    react = async (event) => {
      if (event.kind === 'button')
        await channel.answer(event.interaction, 'Only approvers can approve.', { private: true });
    };
    const update = fake.userPresses({
      chatId: 501,
      messageId: lastId(ref),
      from: ALICE,
      label: 'Approve',
    });
    const press = (await inbox.next()) as ButtonPress;
    expect(press).toMatchObject({
      kind: 'button',
      token: 'opaque-token-1',
      chatRef: 'telegram:501',
      messageRef: ref,
    });
    const queryId = (update.callback_query as { id: string }).id;
    expect(press.idempotencyKey).toBe(`telegram:callback:${queryId}`);
    expect(fake.callbackAnswers.get(queryId)).toMatchObject({
      text: 'Only approvers can approve.',
      show_alert: true,
    });
  });

  it('answers a press publicly in the chat, and stops the spinner of an unanswered press', async () => {
    const ref = await channel.send('telegram:501', {
      text: rich('Q'),
      buttons: [{ id: 't1', label: 'Go' }],
    });
    react = async (event) => {
      if (event.kind === 'button' && event.token === 't1')
        await channel.answer(event.interaction, 'Alice <approved>', { private: false });
    };
    fake.userPresses({ chatId: 501, messageId: lastId(ref), from: ALICE, label: 'Go' });
    await inbox.next();
    const reply = fake.botMessages(501).at(-1)!;
    expect(reply).toMatchObject({ text: 'Alice <approved>', replyToId: lastId(ref) });

    react = async () => {};
    fake.userPresses({ chatId: 501, messageId: lastId(ref), from: ALICE, label: 'Go' });
    await inbox.next();
    await fake.waitForCalls('answerCallbackQuery', 2);
  });

  it('asks for a reason with ForceReply and delivers the answer as a Reply', async () => {
    const ref = await channel.send('telegram:501', {
      text: rich('Q'),
      buttons: [{ id: 'rej', label: 'Reject' }],
    });
    let promptRef = '';
    react = async (event) => {
      if (event.kind === 'button')
        promptRef = await channel.askForReason(event.interaction, 'Why reject?');
    };
    fake.userPresses({ chatId: 501, messageId: lastId(ref), from: ALICE, label: 'Reject' });
    await inbox.next();
    const prompt = fake.message(501, lastId(promptRef))!;
    expect(prompt.text).toBe('@alice Why reject?');
    expect(prompt.rawText).toContain('<a href="tg://user?id=501">@alice</a>');
    expect(fake.okCalls('sendMessage').at(-1)!.params.reply_markup).toMatchObject({
      force_reply: true,
      selective: true,
    });

    fake.userReplies({
      chatId: 501,
      messageId: lastId(promptRef),
      from: ALICE,
      text: 'tests are red',
    });
    const reply = (await inbox.next()) as Reply;
    expect(reply).toMatchObject({
      kind: 'reply',
      text: 'tests are red',
      replyToMessageRef: promptRef,
      chatRef: 'telegram:501',
    });
  });

  it('maps a forum topic to the thread of the chat ref, both ways', async () => {
    fake.userSends({ chat: FORUM, from: ALICE, text: '/status', topic: 42 });
    const event = (await inbox.next()) as Command;
    expect(event.chatRef).toBe(`telegram:${FORUM.id}:42`);
    expect(event.threadRef).toBe('42');
    expect(event.replyToText).toBeUndefined(); // the topic's creation message is not a reply

    const ref = await channel.send(event.chatRef, { text: rich('2 runs') });
    expect(fake.message(FORUM.id, lastId(ref))!.threadId).toBe(42);
    const other = await channel.send(event.chatRef, { text: rich('x'), thread: '7' });
    expect(fake.message(FORUM.id, lastId(other))!.threadId).toBe(7);
  });

  it('loses no message when every third call is rate limited: all arrive, in order', async () => {
    fake.failEvery(3, { retry_after: 0 });
    const texts = Array.from({ length: 12 }, (_, i) => `message ${i}`);
    await Promise.all(texts.map((t) => channel.send('telegram:501', { text: rich(t) })));
    expect(fake.botMessages(501).map((m) => m.text)).toEqual(texts);
    expect(fake.calls.filter((c) => c.errorCode === 429).length).toBeGreaterThanOrEqual(4);
  });

  it('delivers a text over 4096 characters whole, in several messages, buttons on the last', async () => {
    const line = (i: number) => `line ${i} <tag> & ${'x'.repeat(60)}\n`;
    const long = Array.from({ length: 150 }, (_, i) => line(i)).join('');
    const ref = await channel.send('telegram:501', {
      text: rich(long),
      buttons: [{ id: 'b', label: 'OK' }],
    });
    const parts = fake.botMessages(501);
    expect(parts.length).toBeGreaterThan(2);
    expect(parts.map((p) => p.text).join('')).toBe(long);
    expect(parts.every((p) => p.text!.length <= 4096)).toBe(true);
    expect(parts.map((p) => p.replyMarkup !== undefined)).toEqual(
      parts.map((_, i) => i === parts.length - 1),
    );
    expect(parts.map((p) => p.silent)).toEqual(parts.map((_, i) => i > 0));
    expect(ref).toBe(`telegram:501/${parts.map((p) => p.message_id).join(',')}`);

    // An edit to a shorter text keeps one part and deletes the others.
    await channel.edit(ref, { text: rich('done') });
    expect(fake.botMessages(501).map((p) => p.text)).toEqual(['done']);
  });

  it('cuts an edit short with a marker when it needs more parts than were sent', async () => {
    const ref = await channel.send('telegram:501', { text: rich('short') });
    await channel.edit(ref, { text: rich('y'.repeat(5000)) });
    const [only] = fake.botMessages(501);
    expect(only!.text!.length).toBeLessThanOrEqual(4096);
    expect(only!.text).toMatch(/… \(\d+ more characters not shown\)$/);
    expect(parseTelegramHtml(only!.rawText!)).toBe(only!.text);
  });

  it('uploads a file as a document', async () => {
    const ref = await channel.sendFile('telegram:501', {
      name: 'agent.log',
      data: new TextEncoder().encode('hello log'),
      caption: rich(bold('log'), ' of step B'),
    });
    const doc = fake.message(501, lastId(ref))!;
    expect(doc.document?.fileName).toBe('agent.log');
    expect(doc.document?.data.toString()).toBe('hello log');
    expect(doc.caption).toBe('log of step B');
  });

  it('reports API failures as PlatformError and over-long limits as RateLimitedError', async () => {
    fake.failNext('sendMessage', 500, 'Internal Server Error');
    await expect(channel.send('telegram:501', { text: rich('x') })).rejects.toBeInstanceOf(
      PlatformError,
    );
    fake.failNext('sendMessage', 403, 'Forbidden: bot was blocked by the user');
    await expect(channel.send('telegram:501', { text: rich('x') })).rejects.toBeInstanceOf(
      ChatUnreachableError,
    );
    fake.failNext('sendMessage', 429, 'Too Many Requests: retry after 30', { retry_after: 30 });
    const err = await channel.send('telegram:501', { text: rich('x') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(30_000);
    await expect(channel.send('telegram:999', { text: rich('x') })).rejects.toThrow(
      /chat not found/,
    );
  });

  it('keeps polling after a handler fails, logging the failure', async () => {
    react = async (event) => {
      if (event.kind === 'command' && event.name === 'boom') throw new Error('handler bug');
    };
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/boom' });
    fake.userSends({ chat: ALICE_DM, from: ALICE, text: '/status' });
    expect(((await inbox.next()) as Command).name).toBe('status');
    expect(logger.lines).toContainEqual({ level: 'error', msg: 'telegram: handler failed' });
  });

  it('refuses a button id over 64 bytes before calling Telegram', async () => {
    const before = fake.calls.length;
    await expect(
      channel.send('telegram:501', {
        text: rich('x'),
        buttons: [{ id: 'é'.repeat(33), label: 'Go' }],
      }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    expect(fake.calls.length).toBe(before);
  });
});
