/**
 * Administering from the chat: `bindings`, `access`, `unbind` (admins only), `loop`/`changes` as
 * a command, and user typos logged at info as one line, never a warning with a stack.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, BOB, CAROL, STRANGERS, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
const lines: { level: number; msg: string; err?: unknown }[] = [];
beforeEach(async () => {
  lines.length = 0;
  const sink = { write: (s: string) => lines.push(JSON.parse(s)) };
  w = await World.create({ log: pino({ level: 'info' }, sink) });
  const binding = await w.b.repos.bindings.find(TEAM_REF);
  await w.b.repos.allowlist.allow(
    { bindingId: binding!.id },
    'telegram',
    String(CAROL.id),
    'admin',
  );
});
afterEach(async () => {
  await w.cleanup();
});

/** Sends a command and returns the bot's next message in that chat. */
async function ask(from: typeof ALICE, text: string, chat = TEAM): Promise<string> {
  const before = w.fake.botMessages(chat.id).length;
  w.say(from, text, chat);
  await until(() => w.fake.botMessages(chat.id).length > before, `an answer to ${text}`);
  return w.fake.botMessages(chat.id)[before]!.text!;
}

describe('administering from the chat', () => {
  it('lists bindings and roles, unbinds with the chat named, and refuses non-admins', async () => {
    expect(await ask(ALICE, '/bindings')).toBe('You are not allowed to use bindings here.');
    expect(await ask(CAROL, '/bindings')).toBe(`Bound chats (1):\n• ${TEAM_REF} → ${w.workspace}`);
    expect(await ask(CAROL, '/access')).toBe(
      [
        `In ${TEAM_REF}:`,
        `• telegram:${ALICE.id} — operator`,
        `• telegram:${BOB.id} — approver`,
        `• telegram:${CAROL.id} — admin`,
        '• telegram:504 — approver',
      ].join('\n'),
    );
    expect(await ask(CAROL, '/unbind telegram:abc')).toMatch(
      /^chat ref "telegram:abc" is not valid; expected telegram:<chat id>\[:<topic id>\]/,
    );
    // A chat nobody bound (or one Carol does not administer) reads the same.
    expect(await ask(CAROL, `/unbind telegram:${STRANGERS.id}`)).toBe(
      `telegram:${STRANGERS.id} was not bound.`,
    );
    expect(await ask(CAROL, `/unbind ${TEAM_REF}`)).toBe(
      `${TEAM_REF} is not served any more; its roles are gone too.`,
    );
    expect(await w.b.repos.bindings.find(TEAM_REF)).toBeNull();
    expect(await ask(ALICE, '/status')).toBe(
      'This chat is not bound. An admin can pair it: send /pair CODE (the code phasebridge serve prints).',
    );
  });

  it('takes changes and its alias loop as checkpoint answers', async () => {
    for (const verb of ['loop', 'changes']) {
      expect(await ask(BOB, `/${verb} needs tests`)).toBe('No open checkpoint here.');
    }
    expect(await ask(ALICE, '/changes')).toBe('You are not allowed to use changes here.');
  });

  it('logs typos and refused input at info, one line without a stack', async () => {
    await ask(ALICE, '/frobnicate now');
    await ask(ALICE, '/cancel');
    await ask(CAROL, '/unbind telegram:abc');
    await ask(ALICE, '/status 2026-01-01T000000Z-nosuch');
    const chatops = lines.filter((l) => l.msg.startsWith('chatops:'));
    expect(chatops.map((l) => [l.level, l.msg])).toEqual([
      [30, 'chatops: unknown command'],
      [30, 'chatops: bad arguments'],
      [30, 'chatops: command refused'],
      [30, 'chatops: command refused'],
    ]);
    expect(chatops.every((l) => l.err === undefined)).toBe(true);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
  });
});
