/**
 * The outbox meets a refusal on its own: rows a previous process queued are delivered by the next
 * one (nobody waits for them), and the chat has meanwhile removed the bot, been upgraded to a
 * supergroup, or closed its topic. The whole bridge (`startBridge`) and grammY against the fake
 * Bot API, whose chats refuse on their own state. What people see: the same as for a direct send
 * (marked once and told once, the binding follows a migration and the queued messages with it,
 * a closed topic's message lands in the chat), and a refused row is never tried again.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutboxStore } from '../../src/bridges/outbox/index.ts';
import { prose } from '../../src/bridges/render-text.ts';
import { TEAM, TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';
import type { FakeChat } from '../fakes/telegram.ts';

const OPS: FakeChat = { id: -2002, type: 'supergroup', title: 'Ops' };
const TEAM_REF = `telegram:${TEAM.id}`;

let telegram: TelegramDriver;
let w: World;

beforeEach(async () => {
  telegram = await TelegramDriver.start();
  w = await World.create([telegram]);
});
afterEach(async () => {
  await w.cleanup();
});

/** Binds `chat` (optionally one topic of it) with Alice as operator there. */
async function bind(chat: FakeChat, thread?: string): Promise<void> {
  telegram.fake.addChat(chat);
  const { repos } = w.bridge;
  const b = await repos.bindings.bind({
    chatRef: `telegram:${chat.id}`,
    ...(thread && { thread }),
    workspace: w.workspace,
  });
  await repos.allowlist.allow(
    { bindingId: b.id },
    'telegram',
    telegram.userId('alice'),
    'operator',
  );
}

/** With no bridge running, queues sends as a bridge that stopped before delivering them would. */
function leaveQueued(target: string, texts: string[]): number[] {
  const store = OutboxStore.open(join(w.home, 'bridge.db'));
  try {
    return texts.map((t) =>
      store.insert({
        platform: 'telegram',
        lane: target.split(':').slice(0, 2).join(':'),
        kind: 'send',
        target,
        message: { text: prose(t) },
        urgency: 'notice',
      }),
    );
  } finally {
    store.close();
  }
}

function rows(ids: number[]) {
  const store = OutboxStore.open(join(w.home, 'bridge.db'));
  try {
    return ids.map((id) => store.get(id)!);
  } finally {
    store.close();
  }
}

const texts = (chatId: number): string[] =>
  telegram.fake.botMessages(chatId).map((m) => m.text ?? '');

async function seen(chatId: number, match: RegExp): Promise<void> {
  await until(
    () => texts(chatId).some((t) => match.test(t)),
    `a bot message in ${chatId} matching ${match}`,
  );
}

const sendsTo = (chatId: number) =>
  telegram.fake.calls.filter(
    (c) => c.method === 'sendMessage' && Number(c.params.chat_id) === chatId,
  );

describe('the outbox delivering what a previous process queued', () => {
  it('to a chat that removed the bot: marked once, its admin told once in another chat, the rows failed and never retried', async () => {
    await bind(OPS);
    await w.setRole(telegram, 'alice', 'admin');
    await w.stop();
    const ids = leaveQueued(TEAM_REF, ['left behind one', 'left behind two']);
    telegram.fake.store.access.removeBot(TEAM);
    await w.start();

    await until(
      async () => (await w.bridge.repos.unreachable.get(TEAM_REF)) !== null,
      'the team chat marked unreachable',
    );
    expect(await w.bridge.repos.unreachable.get(TEAM_REF)).toMatchObject({ reason: 'bot_kicked' });
    // Alice is the team chat's admin and has a role in Ops: she is told there.
    await seen(OPS.id, /cannot post in telegram:-1001 \(bot_kicked\)/);
    // The first row met the refusal; the second was not sent into the same refusal.
    expect(sendsTo(TEAM.id)).toHaveLength(1);
    expect(rows(ids).map((r) => [r.state, r.errorCode])).toEqual([
      ['failed', 'CHAT_UNREACHABLE'],
      ['failed', 'CHAT_UNREACHABLE'],
    ]);

    // The next start does not try them again, and nobody is told twice.
    await w.restart();
    await w.bridge.repos.unreachable.list(); // the bridge is up and serving
    expect(sendsTo(TEAM.id)).toHaveLength(1);
    expect(texts(OPS.id).filter((t) => t.includes('cannot post in'))).toHaveLength(1);
  });

  it('to a group upgraded to a supergroup: the binding follows, says so once, and every queued message arrives there in order', async () => {
    const group: FakeChat = { id: -3003, type: 'group', title: 'Old group' };
    await bind(group);
    await w.stop();
    const ids = leaveQueued('telegram:-3003', ['queued first', 'queued second', 'queued third']);
    const moved = telegram.fake.store.access.upgradeToSupergroup(group, -1003003);
    telegram.fake.addChat(moved);
    await w.start();

    await seen(moved.id, /queued third/);
    await seen(moved.id, /got a new id/);
    const queued = texts(moved.id).filter((t) => t.startsWith('queued'));
    expect(queued).toEqual(['queued first', 'queued second', 'queued third']);
    expect(texts(moved.id).filter((t) => t.includes('got a new id'))).toHaveLength(1);
    // Only the first row met the old id; the others went to the new one straight away.
    expect(sendsTo(group.id)).toHaveLength(1);
    const { repos } = w.bridge;
    expect(await repos.bindings.find('telegram:-3003', null)).toBeNull();
    expect((await repos.bindings.find('telegram:-1003003', null))?.workspace).toBe(w.workspace);
    expect(await repos.unreachable.list()).toEqual([]);
    expect(rows(ids).map((r) => [r.state, r.target])).toEqual([
      ['confirmed', 'telegram:-1003003'],
      ['confirmed', 'telegram:-1003003'],
      ['confirmed', 'telegram:-1003003'],
    ]);
  });

  it('to a closed forum topic: the message lands in the chat itself, which is not marked', async () => {
    const forum: FakeChat = { id: -4004, type: 'supergroup', title: 'Forum', is_forum: true };
    await bind(forum, '77');
    await w.stop();
    const [id] = leaveQueued('telegram:-4004:77', ['for the topic']);
    telegram.fake.store.access.closeTopic(forum.id, 77);
    await w.start();

    await seen(forum.id, /for the topic/);
    const landed = telegram.fake.botMessages(forum.id).find((m) => m.text === 'for the topic');
    expect(landed?.threadId).toBeUndefined();
    expect(rows([id!])[0]).toMatchObject({ state: 'failed', errorCode: 'CHAT_UNREACHABLE' });
    expect(await w.bridge.repos.unreachable.list()).toEqual([]);
  });
});
