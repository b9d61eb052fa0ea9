/**
 * What Telegram refuses on its own, met by the whole bridge (`startBridge`, real grammY against
 * the fake Bot API), beyond unreachable-telegram.test.ts:
 * - a private chat that blocked the bot (403 "blocked by the user"): marked, the run goes on in
 *   the team chat, the starter is told once there;
 * - a deleted forum topic (400 "message thread not found"): the message goes to the chat itself;
 * - a press answered after the callback query's ~15 s (400 "query is too old", on the fake's
 *   clock): the answer arrives as a reply to the checkpoint, and the decision counts;
 * - a second process polling the token (the fake ends the bridge's held getUpdates with 409):
 *   polling stops and /readyz names the cause.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TEAM, TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until, waitFor } from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';
import { CALLBACK_QUERY_TTL_MS, type FakeChat, type StoredMessage } from '../fakes/telegram.ts';

let telegram: TelegramDriver;
let w: World | undefined;

afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

async function world(options: Parameters<typeof TelegramDriver.start>[0] = {}): Promise<World> {
  telegram = await TelegramDriver.start(options);
  w = await World.create([telegram]);
  return w;
}

/** Binds `chat` (and `thread`) to the world's workspace with Alice as operator, Bob approver. */
async function bindAlso(w: World, chat: FakeChat, thread?: string): Promise<string> {
  telegram.fake.addChat(chat);
  const { repos } = w.bridge;
  const b = await repos.bindings.bind({
    chatRef: `telegram:${chat.id}`,
    ...(thread !== undefined && { thread }),
    workspace: w.workspace,
  });
  for (const [who, role] of [
    ['alice', 'operator'],
    ['bob', 'approver'],
  ] as const) {
    await repos.allowlist.allow({ bindingId: b.id }, 'telegram', telegram.userId(who), role);
  }
  return thread === undefined ? `telegram:${chat.id}` : `telegram:${chat.id}:${thread}`;
}

async function botMessage(chatId: number, match: RegExp): Promise<StoredMessage> {
  let found: StoredMessage | undefined;
  await until(() => {
    found = telegram.fake.botMessages(chatId).find((m) => match.test(m.text ?? ''));
    return found !== undefined;
  }, `a bot message in ${chatId} matching ${match}`);
  return found!;
}

describe('Telegram refusals met by the bridge', () => {
  it('a private chat that blocked the bot: marked, the team chat gets the run, the starter is told once', async () => {
    const w = await world();
    const dm: FakeChat = { id: telegram.user('alice').id, type: 'private' };
    const dmRef = await bindAlso(w, dm);
    telegram.fake.store.access.removeBot(dm);

    await telegram.sendCommand('alice', 'run demo add login');
    const cp = await w.message(telegram, /Checkpoint plan:1/);
    expect(await w.bridge.repos.unreachable.get(dmRef)).toMatchObject({ reason: 'bot_blocked' });
    const warning = await w.message(telegram, /cannot post in/);
    expect(warning.text).toContain(`cannot post in ${dmRef} (bot_blocked)`);
    expect(warning.text).toMatch(/unblock it/);

    await telegram.press('bob', cp, 'Approve');
    await w.message(telegram, /Checkpoint review:1/);
    expect(w.messages(telegram, /cannot post in/)).toHaveLength(1);
    expect(telegram.fake.botMessages(dm.id)).toEqual([]);
  });

  it('a deleted forum topic: the message goes to the chat itself, which is not marked', async () => {
    const w = await world();
    const forum: FakeChat = { id: -4004, type: 'supergroup', title: 'Forum', is_forum: true };
    await bindAlso(w, forum, '77');
    telegram.fake.store.access.deleteTopic(forum.id, 77);

    await telegram.sendCommand('alice', 'run demo add login');
    const cp = await botMessage(forum.id, /Checkpoint plan:1/);
    expect(cp.threadId).toBeUndefined();
    const inTopic = telegram.fake.calls.filter((c) => Number(c.params.message_thread_id) === 77);
    expect(inTopic.length).toBeGreaterThan(0);
    expect(inTopic.every((c) => !c.ok)).toBe(true);
    expect(await w.bridge.repos.unreachable.list()).toEqual([]);
    await w.message(telegram, /Checkpoint plan:1/);
  });

  it('a press answered after the callback query expired: the answer is a reply, the decision counts', async () => {
    let skew = 0;
    const w = await world({ now: () => Date.now() + skew });
    await telegram.sendCommand('alice', 'run demo add login');
    const plan = await w.message(telegram, /Checkpoint plan:1/);
    const runId = runIdOf(plan);

    await telegram.press('bob', plan, 'Approve');
    // The bridge gets to the press more than 15 s after it, as Telegram measures it.
    skew += CALLBACK_QUERY_TTL_MS + 1_000;
    const answer = await waitFor(
      () =>
        telegram.fake
          .botMessages(TEAM.id)
          .find((x) => x.replyToId === Number(plan.id) && /approved/i.test(x.text ?? '')),
      'the answer as a reply to the checkpoint',
    );
    expect(answer.text).toMatch(/approved/i);
    const refused = telegram.fake.calls.filter((c) => c.method === 'answerCallbackQuery');
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused.some((c) => !c.ok && c.errorCode === 400)).toBe(true);
    expect(telegram.fake.callbackAnswers.size).toBe(0);
    await w.message(telegram, /Checkpoint review:1/);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.decision?.answer).toBe('approve');
  });

  it('a second process polling the token: polling stops with a fault in /readyz', async () => {
    const w = await world();
    const { fake } = telegram;
    await until(() => fake.waitingPolls > 0, 'the bridge polling');
    const other = new AbortController();
    const polling = fetch(`${fake.apiRoot}/bot${fake.token}/getUpdates?timeout=30`, {
      signal: other.signal,
    }).catch(() => undefined);
    try {
      let detail: string | undefined;
      await until(async () => {
        const res = await fetch(`${w.bridge.url}/readyz`);
        const body = (await res.json()) as {
          checks: { name: string; ok: boolean; detail?: string }[];
        };
        const check = body.checks.find((c) => c.name === 'telegram');
        detail = check?.ok === false ? check.detail : undefined;
        return detail !== undefined;
      }, 'telegram not ready');
      expect(detail).toMatch(/another process is polling/);
      expect(detail).not.toContain(fake.token);
      expect(fake.calls.filter((c) => c.method === 'getUpdates').at(-1)).toMatchObject({
        ok: false,
        errorCode: 409,
      });
    } finally {
      other.abort();
      await polling;
    }
  });
});
