/** Pure conversion of Slack payloads to neutral events, and the interaction handle. */
import { describe, expect, it } from 'vitest';
import { fromMessageEdit } from '../../../src/bridges/slack/edits.ts';
import {
  type BotContext,
  fromDirectMessage,
  fromMention,
  fromSlashCommand,
  fromThreadReply,
  normalizeSlackText,
  triggerKey,
} from '../../../src/bridges/slack/inbound.ts';
import {
  decodeInteraction,
  encodeInteraction,
  fromBlockAction,
  fromViewSubmission,
  promptMetadata,
} from '../../../src/bridges/slack/presses.ts';

const BOT: BotContext = { team: 'T01', botUserId: 'UBOT', command: '/pb' };

describe('normalizeSlackText', () => {
  it('turns Slack markup into plain text and user mentions into user refs', () => {
    expect(normalizeSlackText('allow <@U123|bob> approver')).toBe('allow slack:U123 approver');
    expect(normalizeSlackText('<#C1|ops> <#C2> <!here> <!subteam^S1|@devs>')).toBe(
      '#ops #C2 @here @devs',
    );
    expect(normalizeSlackText('see <https://x.test/a?b=1&amp;c=2|x.test> and <mailto:a@b.c>')).toBe(
      'see https://x.test/a?b=1&c=2 and mailto:a@b.c',
    );
    expect(normalizeSlackText('a &lt;b&gt; &amp;amp;')).toBe('a <b> &amp;');
  });
});

describe('fromSlashCommand', () => {
  const payload = {
    command: '/pb',
    text: ' Run  demo add login ',
    channel_id: 'C1',
    user_id: 'U1',
    user_name: 'alice',
    trigger_id: '123.456.abc',
  };

  it('takes the first word as the verb and keys the command by its hashed trigger', () => {
    expect(fromSlashCommand(payload, BOT)).toEqual({
      kind: 'command',
      name: 'run',
      args: ['demo', 'add', 'login'],
      rawText: 'Run  demo add login',
      chatRef: 'slack:T01:C1',
      user: { platform: 'slack', id: 'U1', display: '@alice' },
      addressed: true,
      idempotencyKey: triggerKey('123.456.abc'),
    });
    expect(triggerKey('123.456.abc')).not.toContain('abc');
    // In the app's direct message (a D channel) it is marked direct.
    expect(fromSlashCommand({ ...payload, channel_id: 'D1' }, BOT)).toMatchObject({ direct: true });
  });

  it('asks for help when empty and ignores other commands', () => {
    expect(fromSlashCommand({ ...payload, text: '' }, BOT)).toMatchObject({
      name: 'help',
      args: [],
    });
    expect(fromSlashCommand({ ...payload, command: '/other' }, BOT)).toBeUndefined();
  });
});

describe('fromMention', () => {
  const mention = (event: Record<string, unknown>) => ({
    event: { ts: '1700000000.000200', channel: 'C1', user: 'U1', ...event },
    event_id: 'Ev1',
  });

  it('reads the command after our mention, in the mention’s thread', () => {
    expect(
      fromMention(
        mention({ text: 'hey <@UBOT|pb> run demo', thread_ts: '1700000000.000100' }),
        BOT,
      ),
    ).toEqual({
      kind: 'command',
      name: 'run',
      args: ['demo'],
      rawText: 'run demo',
      chatRef: 'slack:T01:C1:1700000000.000100',
      threadRef: '1700000000.000100',
      user: { platform: 'slack', id: 'U1', display: 'U1' },
      addressed: true,
      idempotencyKey: 'slack:event:Ev1',
    });
  });

  it('ignores bots, edits and mentions without a user', () => {
    expect(fromMention(mention({ text: '<@UBOT> run', bot_id: 'B1' }), BOT)).toBeUndefined();
    expect(
      fromMention(mention({ text: '<@UBOT> run', subtype: 'message_changed' }), BOT),
    ).toBeUndefined();
    expect(fromMention(mention({ text: '<@UBOT> run', user: undefined }), BOT)).toBeUndefined();
  });
});

describe('fromBlockAction', () => {
  const body = {
    trigger_id: 'trig-1',
    user: { id: 'U2', username: 'bob' },
    channel: { id: 'C1' },
    message: { ts: '1700000000.000300', thread_ts: '1700000000.000300' },
    response_url: 'https://hooks.slack.com/actions/x',
  };

  it('treats a thread parent as not in a thread, and a reply as in one', () => {
    const parent = fromBlockAction(body, 'tok', BOT)!;
    expect(parent).toMatchObject({
      kind: 'button',
      token: 'tok',
      chatRef: 'slack:T01:C1',
      messageRef: 'slack:T01:C1/1700000000.000300',
      user: { id: 'U2', display: '@bob' },
      idempotencyKey: triggerKey('trig-1'),
    });
    expect(parent.threadRef).toBeUndefined();
    const reply = fromBlockAction(
      { ...body, message: { ts: '1700000000.000300', thread_ts: '1700000000.000100' } },
      'tok',
      BOT,
    )!;
    expect(reply.chatRef).toBe('slack:T01:C1:1700000000.000100');
    expect(reply.messageRef).toBe('slack:T01:C1:1700000000.000100/1700000000.000300');
  });

  it('round-trips the interaction handle and ignores presses outside messages', () => {
    const press = fromBlockAction(body, 'tok', BOT)!;
    expect(decodeInteraction(press.interaction)).toMatchObject({
      g: 'trig-1',
      u: 'U2',
      m: '1700000000.000300',
      r: body.response_url,
      chat: { team: 'T01', channel: 'C1' },
    });
    expect(fromBlockAction({ trigger_id: 't', user: { id: 'U2' } }, 'tok', BOT)).toBeUndefined();
    expect(() =>
      decodeInteraction({ platform: 'telegram', handle: press.interaction.handle }),
    ).toThrow();
    expect(() => decodeInteraction({ platform: 'slack', handle: '{"g":1}' })).toThrow(
      /not a Slack/,
    );
    expect(
      decodeInteraction(encodeInteraction({ g: 'g', c: 'slack:T1:C1', m: '1.2', u: 'U' })).chat,
    ).toEqual({ team: 'T1', channel: 'C1' });
  });
});

describe('fromViewSubmission', () => {
  const submission = (metadata: string, callback = 'phasebridge_reason') => ({
    trigger_id: 'trig-v',
    user: { id: 'U2', username: 'bob' },
    view: {
      id: 'V1',
      callback_id: callback,
      private_metadata: metadata,
      state: { values: { reason: { text: { value: 'flaky tests' } } } },
    },
  });

  it('is a Reply to the prompt ref, in the chat the prompt came from', () => {
    const meta = promptMetadata({ team: 'T01', channel: 'C1', thread: '1700000000.000100' });
    expect(fromViewSubmission(submission(meta))).toEqual({
      kind: 'reply',
      text: 'flaky tests',
      replyToMessageRef: 'slack:T01:C1:1700000000.000100/view:V1',
      chatRef: 'slack:T01:C1:1700000000.000100',
      threadRef: '1700000000.000100',
      user: { platform: 'slack', id: 'U2', display: '@bob' },
      idempotencyKey: triggerKey('trig-v'),
    });
  });

  it('ignores other modals and tampered metadata', () => {
    const meta = promptMetadata({ team: 'T01', channel: 'C1' });
    expect(fromViewSubmission(submission(meta, 'other'))).toBeUndefined();
    expect(fromViewSubmission(submission('{"chat":"telegram:1"}'))).toBeUndefined();
    expect(fromViewSubmission(submission('not json'))).toBeUndefined();
  });
});

describe('fromThreadReply', () => {
  const message = (event: Record<string, unknown>) => ({
    event: {
      ts: '1700000000.000300',
      channel: 'C1',
      user: 'U1',
      thread_ts: '1700000000.000100',
      text: 'use &lt;bcrypt&gt;',
      ...event,
    },
    event_id: 'Ev3',
  });

  it('is a Reply to the thread parent, answered in the thread, keyed by the message', () => {
    expect(fromThreadReply(message({}), BOT)).toEqual({
      kind: 'reply',
      text: 'use <bcrypt>',
      replyToMessageRef: 'slack:T01:C1/1700000000.000100',
      chatRef: 'slack:T01:C1:1700000000.000100',
      threadRef: '1700000000.000100',
      user: { platform: 'slack', id: 'U1', display: 'U1' },
      idempotencyKey: 'slack:msg:C1:1700000000.000300',
    });
    // "Also send to channel" is still a person's reply.
    expect(fromThreadReply(message({ subtype: 'thread_broadcast' }), BOT)?.kind).toBe('reply');
  });

  it('carries the files shared with the reply (file_share) as Reply.files', () => {
    const files = [
      {
        id: 'F1',
        name: 'mockup.png',
        size: 11,
        url_private_download: 'https://files.slack.com/files-pri/T01-F1/download/mockup.png',
      },
      { id: 'F2', name: 'no-url.txt' },
    ];
    const reply = fromThreadReply(message({ subtype: 'file_share', files }), BOT);
    expect(reply?.files).toEqual([
      {
        name: 'mockup.png',
        size: 11,
        handle: 'https://files.slack.com/files-pri/T01-F1/download/mockup.png',
      },
    ]);
    expect(reply?.text).toBe('use <bcrypt>');
    // Files with no words are still the person's reply (issue 29: never silently dropped).
    const alone = fromThreadReply(message({ subtype: 'file_share', files, text: '' }), BOT);
    expect([alone?.kind, alone?.text, alone?.files?.length]).toEqual(['reply', '', 1]);
    // Without files the Reply has no `files` key at all.
    expect(fromThreadReply(message({}), BOT)).not.toHaveProperty('files');
  });

  it('ignores bots and ourselves, edits, top-level messages, mentions and empty text', () => {
    const ignored = [
      { bot_id: 'B1' },
      { user: 'UBOT' },
      { user: undefined },
      { subtype: 'message_changed' },
      { subtype: 'message_deleted' },
      { subtype: 'channel_join' },
      { thread_ts: undefined },
      { thread_ts: '1700000000.000300' },
      { text: '<@UBOT> status' },
      { text: '   ' },
    ];
    for (const extra of ignored) {
      expect([extra, fromThreadReply(message(extra), BOT)]).toEqual([extra, undefined]);
    }
  });
});

describe('fromDirectMessage', () => {
  const im = (event: Record<string, unknown>) => ({
    event: {
      ts: '1700000000.000400',
      channel: 'D1',
      channel_type: 'im',
      user: 'U1',
      text: 'hello',
      ...event,
    },
    event_id: 'Ev4',
  });

  it("is DirectText for a person's top-level message in the app's DM, keyed by the message", () => {
    expect(fromDirectMessage(im({}), BOT)).toEqual({
      kind: 'text',
      text: 'hello',
      chatRef: 'slack:T01:D1',
      user: { platform: 'slack', id: 'U1', display: 'U1' },
      idempotencyKey: 'slack:msg:D1:1700000000.000400',
    });
  });

  it('ignores channel messages, thread replies, bots (ourselves too), edits and empty text', () => {
    for (const extra of [
      { channel: 'C1', channel_type: 'channel' },
      { thread_ts: '1700000000.000100' },
      { bot_id: 'B1' },
      { user: 'UBOT' },
      { subtype: 'message_changed' },
      { text: '   ' },
    ]) {
      expect([extra, fromDirectMessage(im(extra), BOT)]).toEqual([extra, undefined]);
    }
  });
});

describe('fromMessageEdit', () => {
  const changed = (message: Record<string, unknown>) => ({
    event: { type: 'message', subtype: 'message_changed', channel: 'C1', ts: '9.0', message },
    event_id: 'Ev9',
  });
  const edited = { edited: { user: 'U1', ts: '9.0' } };

  it('reads an edited mention as an edit of a command, keyed by the message and the edit', () => {
    const edit = fromMessageEdit(
      changed({ user: 'U1', text: '<@UBOT> run demo add logout', ts: '1.0', ...edited }),
      BOT,
    );
    expect(edit).toEqual({
      kind: 'edit',
      text: 'run demo add logout',
      chatRef: 'slack:T01:C1',
      user: { platform: 'slack', id: 'U1', display: 'U1' },
      originalKey: 'slack:msg:C1:1.0',
      command: 'run',
      idempotencyKey: 'slack:edit:C1:1.0:9.0',
    });
  });

  it('reads an edited thread reply in its thread; unfurls, bots and new messages are no edit', () => {
    const reply = changed({
      user: 'U1',
      text: 'use argon2',
      ts: '2.0',
      thread_ts: '1.0',
      ...edited,
    });
    expect(fromMessageEdit(reply, BOT)).toMatchObject({
      chatRef: 'slack:T01:C1:1.0',
      threadRef: '1.0',
      originalKey: 'slack:msg:C1:2.0',
    });
    expect(fromMessageEdit(reply, BOT)).not.toHaveProperty('command');
    // An unfurl or a new reply count changes the message without `edited`.
    expect(fromMessageEdit(changed({ user: 'U1', text: 'x', ts: '2.0' }), BOT)).toBeUndefined();
    expect(
      fromMessageEdit(changed({ user: 'UBOT', text: 'x', ts: '2.0', ...edited }), BOT),
    ).toBeUndefined();
    expect(
      fromMessageEdit(changed({ bot_id: 'B1', user: 'U2', text: 'x', ts: '2.0', ...edited }), BOT),
    ).toBeUndefined();
    const plain = { event: { type: 'message', user: 'U1', text: 'x', ts: '3.0', channel: 'C1' } };
    expect(fromMessageEdit(plain, BOT)).toBeUndefined();
  });
});
