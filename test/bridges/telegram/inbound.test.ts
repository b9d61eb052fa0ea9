import type { Update } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import {
  decodeInteraction,
  parseCommand,
  toInbound,
} from '../../../src/bridges/telegram/inbound.ts';
import { InvalidInputError } from '../../../src/errors.ts';

const BOT = { id: 999, username: 'phasebridge_bot' };
/** Fixtures are written as the JSON Telegram sends; grammY's unions are too fine-grained to build by hand. */
type Wire = Record<string, unknown>;
const asUpdate = (json: object): Update => json as Update;

const botUser = { id: 999, is_bot: true, first_name: 'PB', username: 'phasebridge_bot' };
const alice = { id: 501, is_bot: false, first_name: 'Alice', last_name: 'Liddell' };
const dm = { id: 501, type: 'private', first_name: 'Alice' };
const group = { id: -100777, type: 'supergroup', title: 'Ops' };
const forum = { id: -100888, type: 'supergroup', title: 'Ops', is_forum: true };

function textMessage(body: string, extra: Wire = {}, chat: Wire = dm): Wire {
  const command = /^\/\S+/.exec(body);
  const message = {
    message_id: 10,
    date: 1,
    chat,
    from: alice,
    text: body,
    ...(command && {
      entities: [{ type: 'bot_command' as const, offset: 0, length: command[0].length }],
    }),
    ...extra,
  };
  return message;
}

const text = (body: string, extra: Wire = {}, chat: Wire = dm): Update =>
  asUpdate({ update_id: 1, message: textMessage(body, extra, chat) });

const botMessage = (id: number, chat: Wire = dm): Wire => ({
  message_id: id,
  date: 1,
  chat,
  from: botUser,
  text: 'Why?',
});

describe('parseCommand', () => {
  const entity = (length: number) => [{ type: 'bot_command' as const, offset: 0, length }];

  it('reads the verb, lower-cased, and whitespace-separated args', () => {
    expect(parseCommand('/Run  a   b', entity(4), 'x_bot')).toEqual({
      name: 'run',
      args: ['a', 'b'],
    });
  });

  it('accepts a mention of us in any case and refuses other bots', () => {
    expect(parseCommand('/run@X_Bot go', entity(10), 'x_bot')).toEqual({
      name: 'run',
      args: ['go'],
      addressed: true,
    });
    expect(parseCommand('/run@other_bot go', entity(14), 'x_bot')).toBeUndefined();
  });

  it('reads `/start <code>` (what a t.me/<bot>?start=<code> link sends) as `pair <code>`', () => {
    expect(parseCommand('/start ABCDE23456', entity(6), 'x_bot')).toEqual({
      name: 'pair',
      args: ['ABCDE23456'],
    });
    expect(parseCommand('/start', entity(6), 'x_bot')).toEqual({ name: 'start', args: [] });
  });

  it('needs a bot_command entity at offset 0', () => {
    expect(parseCommand('/run', undefined, 'x_bot')).toBeUndefined();
    expect(
      parseCommand('hi /run', [{ type: 'bot_command', offset: 3, length: 4 }], 'x_bot'),
    ).toBeUndefined();
  });
});

describe('toInbound', () => {
  it('makes a Command with the immutable user id and a message-based idempotency key', () => {
    expect(toInbound(text('/status all'), BOT)).toEqual({
      kind: 'command',
      name: 'status',
      args: ['all'],
      rawText: '/status all',
      chatRef: 'telegram:501',
      user: { platform: 'telegram', id: '501', display: 'Alice Liddell' },
      idempotencyKey: 'telegram:msg:501:10',
      direct: true,
    });
    expect(toInbound(text('/status', {}, group), BOT)).not.toHaveProperty('direct');
  });

  it('carries the replied-to text on a command', () => {
    const event = toInbound(text('/approve', { reply_to_message: botMessage(3) }), BOT);
    expect(event).toMatchObject({ kind: 'command', replyToText: 'Why?' });
  });

  it('makes a Reply only for replies to our own messages', () => {
    expect(toInbound(text('flaky test', { reply_to_message: botMessage(3) }), BOT)).toMatchObject({
      kind: 'reply',
      text: 'flaky test',
      replyToMessageRef: 'telegram:501/3',
    });
    const toHuman = { ...botMessage(3, group), from: alice };
    expect(toInbound(text('hi', { reply_to_message: toHuman }, group), BOT)).toBeUndefined();
    expect(toInbound(text('just chatting', {}, group), BOT)).toBeUndefined();
    // In a private chat everything is for the bot: plain text is DirectText.
    expect(toInbound(text('just chatting'), BOT)).toEqual({
      kind: 'text',
      text: 'just chatting',
      chatRef: 'telegram:501',
      user: { platform: 'telegram', id: '501', display: 'Alice Liddell' },
      idempotencyKey: 'telegram:msg:501:10',
    });
    expect(
      toInbound(text('/x@other_bot', { reply_to_message: botMessage(3) }), BOT),
    ).toBeUndefined();
  });

  it('makes a Reply of a photo sent without a caption in reply to our message (issue 29)', () => {
    const { text: _none, ...message } = textMessage(
      '',
      {
        reply_to_message: botMessage(3, group),
        photo: [{ file_id: 'PHOTO1', file_unique_id: 'u1', width: 90, height: 90, file_size: 600 }],
      },
      group,
    );
    const event = toInbound(asUpdate({ update_id: 1, message }), BOT);
    expect(event).toMatchObject({
      kind: 'reply',
      text: '',
      replyToMessageRef: 'telegram:-100777/3',
      files: [{ name: 'photo-10.jpg', handle: 'PHOTO1', size: 600 }],
    });
    // A message with neither words nor a file (a sticker, a poll) is still nothing for us.
    const { text: _t, ...sticker } = textMessage(
      '',
      { reply_to_message: botMessage(3, group) },
      group,
    );
    expect(toInbound(asUpdate({ update_id: 1, message: sticker }), BOT)).toBeUndefined();
  });

  it('puts a forum topic in the chat ref and ignores the topic-root pseudo reply', () => {
    const root = {
      message_id: 42,
      date: 1,
      chat: forum,
      from: alice,
      forum_topic_created: { name: 't', icon_color: 1 },
    };
    const update = text(
      '/status',
      { message_thread_id: 42, is_topic_message: true, reply_to_message: root },
      forum,
    );
    const event = toInbound(update, BOT);
    expect(event).toMatchObject({ chatRef: 'telegram:-100888:42', threadRef: '42' });
    expect(event).not.toHaveProperty('replyToText');
  });

  it('ignores message_thread_id outside forum topics (reply threads in ordinary groups)', () => {
    const update = text('/status', { message_thread_id: 5 }, group);
    expect(toInbound(update, BOT)).toMatchObject({ chatRef: 'telegram:-100777' });
  });

  it('ignores bots, anonymous admins and channel posts', () => {
    expect(toInbound(text('/run', { from: { ...alice, is_bot: true } }), BOT)).toBeUndefined();
    expect(toInbound(text('/run', { sender_chat: group }), BOT)).toBeUndefined();
    const { from: _omit, ...noSender } = textMessage('/run');
    expect(toInbound(asUpdate({ update_id: 1, message: noSender }), BOT)).toBeUndefined();
  });

  it('makes a ButtonPress whose interaction handle can be decoded', () => {
    const update = asUpdate({
      update_id: 2,
      callback_query: {
        id: '88',
        from: { ...alice, username: 'alice' },
        chat_instance: 'c',
        data: 'tok',
        message: { ...botMessage(7, forum), message_thread_id: 42, is_topic_message: true },
      },
    });
    const event = toInbound(update, BOT);
    expect(event).toMatchObject({
      kind: 'button',
      token: 'tok',
      chatRef: 'telegram:-100888:42',
      messageRef: 'telegram:-100888:42/7',
      user: { id: '501', display: '@alice' },
      idempotencyKey: 'telegram:callback:88',
    });
    if (event?.kind !== 'button') throw new Error('expected a button press');
    expect(decodeInteraction(event.interaction)).toEqual({
      q: '88',
      c: -100888,
      t: 42,
      m: 7,
      u: 501,
      n: '@alice',
    });
  });

  it('refuses an interaction handle it did not make', () => {
    expect(() => decodeInteraction({ platform: 'telegram', handle: '{"q":1}' })).toThrow(
      InvalidInputError,
    );
    expect(() => decodeInteraction({ platform: 'slack', handle: '{}' })).toThrow(InvalidInputError);
    expect(() => decodeInteraction({ platform: 'telegram', handle: 'nope' })).toThrow(
      InvalidInputError,
    );
  });
});
