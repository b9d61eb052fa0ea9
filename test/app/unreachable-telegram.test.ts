/**
 * When Telegram says no: the whole bridge (`startBridge`) and grammY against the fake Bot API,
 * whose chats refuse the bot on their own state (bot removed, group upgraded, topic closed).
 * What people see: the other chat gets its copies and the run moves on, the starter is told
 * once in a chat they use, the chat is tried again when an operator writes there, a migrated
 * group is followed to its new id.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TEAM, TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until } from '../contracts/platform-driver.ts';
import { runCli, World } from '../contracts/world.ts';
import type { FakeChat, StoredMessage } from '../fakes/telegram.ts';

/** A second chat of the same team, bound to the same workspace. */
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

/** Binds `chat` to the world's workspace with Alice as operator and Bob as approver there. */
async function bindAlso(chat: FakeChat): Promise<void> {
  telegram.fake.addChat(chat);
  const { repos } = w.bridge;
  const b = await repos.bindings.bind({ chatRef: `telegram:${chat.id}`, workspace: w.workspace });
  await repos.allowlist.allow(
    { bindingId: b.id },
    'telegram',
    telegram.userId('alice'),
    'operator',
  );
  await repos.allowlist.allow({ bindingId: b.id }, 'telegram', telegram.userId('bob'), 'approver');
}

const texts = (chatId: number): string[] =>
  telegram.fake.botMessages(chatId).map((m) => m.text ?? '');

async function botMessage(chatId: number, match: RegExp): Promise<StoredMessage> {
  let found: StoredMessage | undefined;
  await until(() => {
    found = telegram.fake.botMessages(chatId).find((m) => match.test(m.text ?? ''));
    return found !== undefined;
  }, `a bot message in ${chatId} matching ${match}`);
  return found!;
}

const warningsAbout = (chatId: number, ref: string) =>
  texts(chatId).filter((t) => t.includes(`cannot post in ${ref}`));

/** A gate before the first step (opened at the start) and one after the second. */
const GATE = `name: Gate
steps:
  - id: plan
    agent: demo
    prompt: plan it
    checkpoint:
      when: before
  - id: build
    agent: demo
    prompt: build it
    checkpoint:
      when: after
`;

describe('a Telegram chat that removed the bot', () => {
  it('the other chat gets the checkpoint, the run moves on, the starter is told once, and an operator writing there brings it back', async () => {
    await bindAlso(OPS);
    w.workflow('gate', GATE);
    // An admin of the team chat removed the bot. The run's chats are the bound ones in order,
    // the team chat first: the checkpoint meets the refusal before it is posted to Ops.
    telegram.fake.store.access.removeBot(TEAM);
    await w.bridge.orchestrator.startRun({
      workflow: 'gate',
      workspace: w.workspace,
      spec: 'add login',
      actor: { id: `telegram:${telegram.userId('alice')}`, name: 'alice' },
      key: 'start-gate',
    });

    const cp = await botMessage(OPS.id, /Checkpoint plan/);
    const mark = await w.bridge.repos.unreachable.get(TEAM_REF);
    expect(mark).toMatchObject({ chatRef: TEAM_REF, reason: 'bot_kicked' });
    expect(mark!.detail).toContain('bot was kicked from the supergroup chat');
    // Alice started the run and has a role in Ops: she is told there.
    const warning = await botMessage(OPS.id, /cannot post in/);
    expect(warning.text).toContain(`cannot post in ${TEAM_REF} (bot_kicked)`);
    expect(warning.text).toMatch(/add it back/);

    const toTeam = () => telegram.fake.calls.filter((c) => Number(c.params.chat_id) === TEAM.id);
    const triedAtStart = toTeam().length;
    // /readyz names the chat without making the bridge unready; doctor names it with the fix.
    const readyz = await fetch(`${w.bridge.url}/readyz`);
    const body = (await readyz.json()) as { checks: { name: string; detail?: string }[] };
    expect(body.checks.find((c) => c.name === 'chats')).toEqual({
      name: 'chats',
      ok: true,
      detail: `1 unreachable: ${TEAM_REF} (bot_kicked)`,
    });
    const doctor = await runCli(w, ['doctor'], {
      ...telegram.env(),
      PHASEBRIDGE_PORT: new URL(w.bridge.url).port,
    });
    expect(doctor.out).toMatch(
      new RegExp(`^failed {2}chat ${TEAM_REF}: unreachable since .*bot was kicked`, 'm'),
    );
    expect(doctor.out).toMatch(/^ {8}fix: fix it on the platform \(add the bot back/m);

    telegram.fake.userPresses({
      chatId: OPS.id,
      messageId: cp.message_id,
      from: telegram.user('bob'),
      label: 'Approve',
    });
    const build = await botMessage(OPS.id, /Checkpoint build/);
    // Told once, not on every update; the team chat was given up on after its refusal.
    expect(warningsAbout(OPS.id, TEAM_REF)).toHaveLength(1);
    expect(toTeam().every((c) => !c.ok)).toBe(true);
    expect(toTeam()).toHaveLength(triedAtStart);

    // The bot is added back and Alice writes there: the chat is tried again.
    telegram.fake.store.access.addBot(TEAM.id);
    await telegram.sendCommand('alice', 'runs');
    await until(
      async () => (await w.bridge.repos.unreachable.get(TEAM_REF)) === null,
      'the mark cleared',
    );
    telegram.fake.userPresses({
      chatId: OPS.id,
      messageId: build.message_id,
      from: telegram.user('bob'),
      label: 'Approve',
    });
    // The run's end reaches the team chat again.
    await botMessage(TEAM.id, /🏁 Run \S+/);
    expect(warningsAbout(OPS.id, TEAM_REF)).toHaveLength(1);
  });
});

describe('a Telegram group upgraded to a supergroup', () => {
  it('the binding follows the new chat id, says so there, and the checkpoint arrives there', async () => {
    const group: FakeChat = { id: -3003, type: 'group', title: 'Old group' };
    await bindAlso(group);
    const moved = telegram.fake.store.access.upgradeToSupergroup(group, -1003003);
    telegram.fake.addChat(moved);

    await telegram.sendCommand('alice', 'run demo add login');
    const note = await botMessage(moved.id, /got a new id/);
    expect(note.text).toContain('telegram:-1003003');
    await botMessage(moved.id, /Checkpoint plan:1/);
    const { repos } = w.bridge;
    expect(await repos.bindings.find('telegram:-3003', null)).toBeNull();
    const binding = await repos.bindings.find('telegram:-1003003', null);
    expect(binding?.workspace).toBe(w.workspace);
    // Roles came along with the binding.
    expect(await repos.allowlist.roleOf('telegram', telegram.userId('bob'), binding!.id)).toBe(
      'approver',
    );
    expect(await repos.unreachable.list()).toEqual([]);
    // The team chat got everything as usual.
    await botMessage(TEAM.id, /Checkpoint plan:1/);
  });
});

describe('a closed forum topic', () => {
  it('falls back to the chat itself, which is not marked unreachable', async () => {
    const forum: FakeChat = { id: -4004, type: 'supergroup', title: 'Forum', is_forum: true };
    telegram.fake.addChat(forum);
    await w.bridge.repos.bindings.bind({
      chatRef: `telegram:${forum.id}`,
      thread: '77',
      workspace: w.workspace,
    });
    telegram.fake.store.access.closeTopic(forum.id, 77);

    await telegram.sendCommand('alice', 'run demo add login');
    const cp = await botMessage(forum.id, /Checkpoint plan:1/);
    // Posted in the chat, not in the closed topic; every attempt at the topic was refused.
    expect(cp.threadId).toBeUndefined();
    const inTopic = telegram.fake.calls.filter((c) => Number(c.params.message_thread_id) === 77);
    expect(inTopic.length).toBeGreaterThan(0);
    expect(inTopic.every((c) => !c.ok)).toBe(true);
    expect(await w.bridge.repos.unreachable.list()).toEqual([]);
    await botMessage(TEAM.id, /Checkpoint plan:1/);
  });
});
