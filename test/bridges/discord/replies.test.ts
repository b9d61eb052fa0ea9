/**
 * People's messages as guidance replies: the pure reading of MESSAGE_CREATE, and the adapter
 * against the fake gateway (intents by the application's flags, a reply as a Reply, a thread
 * message as a Reply to the thread's starter message, DMs for a private word).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type MessageFacts, toGuidanceReply } from '../../../src/bridges/discord/inbound.ts';
import type { Reply } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import { type Harness, startHarness } from './support.ts';

const FACTS: MessageFacts = {
  id: '900',
  guildId: '1',
  channelId: '2',
  threadParentId: null,
  type: 19,
  content: ' use bcrypt ',
  author: { id: '7', username: 'bob', globalName: 'Bob' },
  fromBot: false,
  referenceId: '50',
  files: [],
};

describe('toGuidanceReply', () => {
  it('a reply is a Reply to the message it answers, in its channel, keyed by the message', () => {
    expect(toGuidanceReply(FACTS, '99')).toEqual({
      kind: 'reply',
      text: 'use bcrypt',
      replyToMessageRef: 'discord:1:2/50',
      chatRef: 'discord:1:2',
      user: { platform: 'discord', id: '7', display: 'Bob' },
      idempotencyKey: 'discord:message:900',
    });
  });

  it('a message in a thread answers the thread’s starter message, and is answered in the thread', () => {
    const inThread = { ...FACTS, type: 0, referenceId: null, channelId: '50', threadParentId: '2' };
    expect(toGuidanceReply(inThread, '99')).toMatchObject({
      replyToMessageRef: 'discord:1:2/50',
      chatRef: 'discord:1:2:50',
      threadRef: '50',
    });
    // A reply inside a thread answers that message, in the thread.
    const replyInThread = { ...inThread, type: 19, referenceId: '60' };
    expect(toGuidanceReply(replyInThread, '99')?.replyToMessageRef).toBe('discord:1:2:50/60');
  });

  it('carries the message’s attachments as Reply.files', () => {
    const url = 'https://cdn.discordapp.com/attachments/2/3/mockup.png?ex=1';
    const files = [{ name: 'mockup.png', size: 11, handle: url }];
    expect(toGuidanceReply({ ...FACTS, files }, '99')?.files).toEqual(files);
    // An attachment alone is still the person's reply (issue 29: never silently dropped).
    const alone = toGuidanceReply({ ...FACTS, content: '', files }, '99');
    expect([alone?.kind, alone?.text, alone?.files]).toEqual(['reply', '', files]);
    expect(toGuidanceReply(FACTS, '99')).not.toHaveProperty('files');
  });

  it('ignores bots, ourselves, DMs, plain channel messages, empty text and other types', () => {
    const ignored: Partial<MessageFacts>[] = [
      { fromBot: true },
      { author: { id: '99', username: 'pb', globalName: null } },
      { guildId: null },
      { type: 0, referenceId: null },
      { content: '' },
      { type: 7 },
    ];
    for (const o of ignored)
      expect([o, toGuidanceReply({ ...FACTS, ...o }, '99')]).toEqual([o, undefined]);
  });
});

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('DiscordChannel and people’s messages', () => {
  it('delivers a reply to its message as a Reply, once per message id', async () => {
    h = await startHarness();
    const ref = await h.channel.send(h.chatRef, { text: rich('Checkpoint plan:1') });
    const bob = h.fake.state.user('bob');
    const reply = h.fake.userMessage(bob, h.fake.state.text, 'use bcrypt', {
      replyTo: ref.split('/')[1]!,
    });
    const event = (await h.inbox.next()) as Reply;
    expect(event).toMatchObject({ kind: 'reply', text: 'use bcrypt', replyToMessageRef: ref });
    h.fake.redeliver(reply);
    expect((await h.inbox.next()).idempotencyKey).toBe(event.idempotencyKey);
  });

  it('reads the attachments of a reply from MESSAGE_CREATE and downloads them from the fake CDN', async () => {
    h = await startHarness();
    const ref = await h.channel.send(h.chatRef, { text: rich('Checkpoint plan:1') });
    const bob = h.fake.state.user('bob');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    h.fake.userMessage(bob, h.fake.state.text, 'match this', {
      replyTo: ref.split('/')[1]!,
      files: [{ name: 'mockup.png', data: png }],
    });
    const event = (await h.inbox.next()) as Reply;
    expect(event.files?.map((f) => [f.name, f.size])).toEqual([['mockup.png', png.length]]);
    const got = await h.channel.downloadFile(event.files![0]!, 1024);
    expect(Buffer.from(got).equals(png)).toBe(true);
    await expect(h.channel.downloadFile(event.files![0]!, 4)).rejects.toThrow(/over the limit/);
  });

  it('without the Message Content intent: identifies without it, says so, and sees no replies', async () => {
    h = await startHarness({}, { messageContent: false });
    expect(h.fake.gateway.intents).toBe((1 << 0) | (1 << 9) | (1 << 12));
    expect(h.log.lines).toContainEqual(
      expect.objectContaining({
        level: 'warn',
        msg: 'discord: the Message Content intent is off: replies to run messages are not seen as guidance',
      }),
    );
    h.log.lines.length = 0;
    const ref = await h.channel.send(h.chatRef, { text: rich('Checkpoint plan:1') });
    const bob = h.fake.state.user('bob');
    h.fake.userMessage(bob, h.fake.state.text, 'use bcrypt', { replyTo: ref.split('/')[1]! });
    // Discord blanks the text: the next event is the command typed after it.
    h.fake.slashCommand(bob, h.fake.state.text, 'status');
    expect((await h.inbox.next()).kind).toBe('command');
  });

  it('whispers by DM, and pings the person alone in the chat when their DMs are closed', async () => {
    h = await startHarness();
    const carol = h.fake.state.user('carol');
    const user = { platform: 'discord' as const, id: carol.id, display: 'Carol' };
    await h.channel.whisper(h.chatRef, user, 'only operators');
    const dm = h.fake.state.dm(carol);
    expect(h.fake.state.channelMessages(dm.id).map((m) => m.content)).toEqual(['only operators']);
    h.fake.state.dmsClosed.add(carol.id);
    await h.channel.whisper(h.chatRef, user, 'only operators');
    const inChat = h.fake.state.channelMessages(h.fake.state.text.id).at(-1)!;
    expect(inChat.content).toBe(`<@${carol.id}> only operators`);
    const post = h.fake.okCalls('POST', /\/messages$/).at(-1)!;
    expect(post.body?.allowed_mentions).toEqual({ users: [carol.id] });
  });
});
