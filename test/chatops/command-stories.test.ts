/**
 * Commands end to end: pairing, unbound chats, usage answers, administration (deduplicated
 * across a restart) and approving by command.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createPairingCode } from '../../src/chatops/index.ts';
import { ALICE, BOB, CAROL, DAVE, STRANGERS, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
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

describe('pairing', () => {
  it('binds the chat and makes the sender admin with a good code; wrong, used and expired codes fail', async () => {
    const strangers = `telegram:${STRANGERS.id}`;
    // Unbound: whoami, help and pair work; other verbs get one answer saying how to pair;
    // words that are no verb of ours (another bot's) stay silent.
    const unbound =
      'This chat is not bound. An admin can pair it: send /pair CODE (the code phasebridge serve prints).';
    expect(await ask(CAROL, '/status', STRANGERS)).toBe(unbound);
    expect(await ask(CAROL, '/run demo x', STRANGERS)).toBe(unbound);
    w.say(CAROL, '/frobnicate', STRANGERS);
    expect(await ask(CAROL, '/whoami', STRANGERS)).toContain('It is not bound to a workspace');
    expect(w.fake.botMessages(STRANGERS.id)).toHaveLength(3);

    expect(await ask(CAROL, '/pair WRONGCODE22', STRANGERS)).toMatch(
      /^That pairing code is not valid/,
    );
    const expired = await createPairingCode(w.b.repos, Date.now() - 11 * 60_000);
    expect(await ask(CAROL, `/pair ${expired}`, STRANGERS)).toMatch(
      /^That pairing code has expired/,
    );
    const code = await createPairingCode(w.b.repos, Date.now());
    expect(code).toMatch(/^[A-Z2-9]{10}$/);
    expect(await ask(CAROL, `/pair ${code.toLowerCase()}`, STRANGERS)).toBe(
      `Paired. This chat works in ${w.workspace} and you (@carol) are its admin. Send help for the commands.`,
    );
    expect(await ask(DAVE, `/pair ${code}`, STRANGERS)).toMatch(
      /^That pairing code was already used/,
    );

    const binding = await w.b.repos.bindings.find(strangers);
    expect(binding?.workspace).toBe(w.workspace);
    expect(await w.b.repos.allowlist.roleOf('telegram', String(CAROL.id), binding!.id)).toBe(
      'admin',
    );
    expect(await w.b.repos.allowlist.roleOf('telegram', String(DAVE.id), binding!.id)).toBeNull();
    expect(await ask(CAROL, '/whoami', STRANGERS)).toContain('Your role here: admin.');

    const pairs = await w.b.repos.audit.listRecent({ action: 'command:pair' });
    expect(pairs.map((e) => e.outcome).reverse()).toEqual([
      'refused',
      'refused',
      'allowed',
      'refused',
    ]);
    const silent = await w.b.repos.audit.listRecent({
      actor: `telegram:${CAROL.id}`,
      outcome: 'refused',
    });
    expect(
      silent.some((e) => e.action === 'command:status' && e.detail?.includes('chat not bound')),
    ).toBe(true);
  });
});

describe('commands', () => {
  it('answers bad arguments and unknown commands with the usage', async () => {
    expect(await ask(ALICE, '/cancel')).toBe(
      'Bad arguments.\nUsage: cancel <run> [reason] — cancel a run',
    );
    expect(await ask(ALICE, '/frobnicate now')).toBe(
      'Unknown command "frobnicate". Send help for the list of commands.',
    );
    // A typo gets the likely command first, with its usage in one line.
    expect(await ask(ALICE, '/staus')).toBe(
      'Did you mean status? (unknown command "staus")\nUsage: status [run] — a run\'s progress (default: this chat\'s active runs)',
    );
    expect(await ask(ALICE, '/help aprove')).toMatch(
      /^Did you mean approve\? \(unknown command "aprove"\)\nUsage: approve /,
    );
    expect(await ask(BOB, '/reject')).toMatch(
      /^A reject needs a reason\.\nUsage: reject \[run\] <reason>/,
    );
    expect(await ask(ALICE, '/run nosuchflow do it')).toBe(
      'Unknown workflow "nosuchflow". Workflows here: coordinator, demo, flow-start-issue, pabcd.',
    );
    expect(await ask(CAROL, '/help approve')).toBe(
      'Usage: approve [run] [reason] — approve the open checkpoint\nNeeds the approver role.',
    );
  });

  it('administers roles, refusing non-admins, and acts once on an allow delivered again after a restart', async () => {
    expect(await ask(BOB, '/allow 503 viewer')).toBe('You are not allowed to use allow here.');
    const binding = (await w.b.repos.bindings.find(TEAM_REF))!;
    await w.b.repos.allowlist.allow(
      { bindingId: binding.id },
      'telegram',
      String(DAVE.id),
      'admin',
    );
    expect(await ask(DAVE, '/allow @carol viewer')).toMatch(/^use the user's id, not a name/);
    const allow = w.say(DAVE, '/allow 503 viewer');
    await w.message(/^telegram:503 is now viewer here\.$/);
    expect(await ask(CAROL, '/runs')).toBe('No runs here yet.');

    await w.stop();
    await w.start();
    w.fake.pushUpdate({ message: allow.message });
    expect(await ask(DAVE, '/deny telegram:503')).toBe('telegram:503 has no role here any more.');
    expect(w.messages(/is now viewer here/)).toHaveLength(1);
    expect(await w.b.repos.allowlist.roleOf('telegram', String(CAROL.id), binding.id)).toBeNull();
    expect(await ask(DAVE, `/deny ${DAVE.id}`)).toBe('You cannot remove your own role.');
    const allows = await w.b.repos.audit.listRecent({
      action: 'command:allow',
      outcome: 'allowed',
    });
    expect(allows).toHaveLength(1);
  });

  it('approves by command the chat’s single open checkpoint, and asks which one when there are several', async () => {
    expect(await ask(BOB, '/approve')).toBe('No open checkpoint here.');
    w.say(ALICE, '/run demo first change');
    const first = await w.message(/Checkpoint plan:1 — run \S+first-change/);
    expect(await ask(BOB, '/approve looks fine')).toMatch(
      /^Checkpoint plan:1 of run \S+first-change: approved — 1 of 1 approval; the run moves on\.$/,
    );
    await until(
      () => /Approved by @bob/.test(w.fake.message(TEAM.id, first.message_id)!.text!),
      'the copy edit',
    );
    expect(w.fake.message(TEAM.id, first.message_id)!.text).toContain('Reason given: looks fine');

    w.say(ALICE, '/run demo second change');
    w.say(ALICE, '/run demo third change');
    await w.message(/Checkpoint plan:1 — run \S+second-change/);
    await w.message(/Checkpoint plan:1 — run \S+third-change/);
    await w.message(/Checkpoint review:1 — run \S+first-change/);
    const answer = await ask(BOB, '/approve');
    expect(answer).toMatch(/^3 open checkpoints here; name the run:/);
    const third = /• (\S+third-change): checkpoint plan:1/.exec(answer)![1]!;
    expect(await ask(BOB, `/reject ${third} not now`)).toBe(
      `Checkpoint plan:1 of run ${third}: rejected — the run is stopped.`,
    );
    await w.message(/^❌ Run \S+third-change Failed: rejected by @bob: not now/);
  });
});
