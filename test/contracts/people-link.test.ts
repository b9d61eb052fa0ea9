/**
 * Issue 36: one person on Telegram and Slack. `link` on one platform gives a one-time code, `link
 * <code>` on the other claims it, the first confirms; then quorum and four-eyes count the person
 * (one vote however many platforms they press on; the starter on Slack cannot approve on
 * Telegram) and the audit names one person. Codes are single-use, expire, and a forged, stale or
 * own code is refused out loud; `phasebridge people unlink` splits an identity off again. Real
 * grammY and Bolt against the fakes, one bridge serving both chats.
 */

import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { type Persona, type PlatformDriver, until } from './platform-driver.ts';
import { runCli, runIdOf, World } from './world.ts';

let slack: SlackDriver;
let telegram: TelegramDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  telegram = await TelegramDriver.start();
  w = await World.create([slack, telegram]);
});
afterEach(async () => {
  await w.cleanup();
});

const CODE = /Your link code: `?([A-Z2-9]{10})`?/;

/** The newest bot message in `d`'s chat matching `match` (waits for one). */
async function said(d: PlatformDriver, match: RegExp): Promise<string> {
  return (await w.message(d, match)).text;
}

/** `who` asks for a code on `from`; returns it. */
async function codeFrom(who: Persona, from: PlatformDriver): Promise<string> {
  const before = w.messages(from, CODE).length;
  await from.sendCommand(who, 'link');
  await until(() => w.messages(from, CODE).length > before, 'a link code');
  return CODE.exec(w.messages(from, CODE).at(-1)!.text)![1]!;
}

/** `who` links their account on `from` with their account on `to`, both sides confirming. */
async function link(who: Persona, from: PlatformDriver, to: PlatformDriver): Promise<void> {
  const code = await codeFrom(who, from);
  await to.sendCommand(who, `link ${code}`);
  expect(await said(to, /Code accepted/)).toMatch(
    new RegExp(`confirms on ${from.platform}: send .?link confirm.? there`),
  );
  // The first side is told who sent the code, and confirms.
  expect(await said(from, /sent your link code/)).toContain(to.userId(who));
  await from.sendCommand(who, 'link confirm');
  for (const d of [from, to]) {
    expect(await said(d, /Linked: /)).toMatch(/are one person now/);
  }
}

const QUORUM =
  'name: Quorum\nsteps:\n  - id: build\n    agent: demo\n    prompt: build it\n    checkpoint:\n      when: after\n      approvals: 2\n';
const GATED =
  'name: Gated\nsteps:\n  - id: build\n    agent: demo\n    prompt: build it\n    checkpoint:\n      when: after\n      fourEyes: true\n';

describe('one person on Telegram and Slack', () => {
  it('a linked person is one vote towards a quorum of two, and the audit names one person', async () => {
    await link('bob', telegram, slack);
    w.workflow('quorum', QUORUM);
    await slack.sendCommand('alice', 'run quorum ship it');
    const onTelegram = await w.message(telegram, /Checkpoint build:1/);
    const onSlack = await w.message(slack, /Checkpoint build:1/);
    const runId = runIdOf(onSlack);

    const first = await telegram.press('bob', onTelegram, 'Approve');
    expect(await telegram.answerTo(first)).toBe('Approved — 1 of 2 approvals');
    // The same person on the other platform: refused, no second vote.
    const again = await slack.press('bob', onSlack, 'Approve');
    expect(await slack.answerTo(again)).toMatch(/already voted on checkpoint build:1/);
    await slack.sendCommand('bob', `approve ${runId}`);
    expect(await said(slack, /Could not approve/)).toMatch(/already voted/);
    expect((await w.bridge.orchestrator.getRun(runId)).checkpoint!.votes).toHaveLength(1);

    const dave = await slack.press('dave', onSlack, 'Approve');
    expect(await slack.answerTo(dave)).toBe('Approved — 2 of 2 approvals; the run moves on');
    const state = await w.runState(
      runId,
      (s) => s.checkpoints[0]?.decision !== undefined,
      'decided',
    );
    expect(state.checkpoints[0]!.decision!.by.map((a) => a.id)).toEqual([
      `telegram:${telegram.userId('bob')}`,
      `slack:${slack.userId('dave')}`,
    ]);

    // The audit: Bob's rows from both platforms name one person, with one person id.
    const audit = await runCli(w, ['audit', runId, '--json']);
    expect(audit.code, audit.err).toBe(0);
    const rows = (JSON.parse(audit.out) as { audit: AuditRow[] }).audit;
    const bobs = rows.filter((r) =>
      [`telegram:${telegram.userId('bob')}`, `slack:${slack.userId('bob')}`].includes(r.actor),
    );
    expect(new Set(bobs.map((r) => r.actor)).size).toBe(2);
    expect(new Set(bobs.map((r) => r.actorName))).toEqual(new Set([telegram.displayName('bob')]));
    const persons = new Set(bobs.map((r) => r.person));
    expect(persons.size).toBe(1);
    expect([...persons][0]).toMatch(/^person:/);
  });

  it('the starter on Slack cannot approve on Telegram under four-eyes; unlinked, that account can', async () => {
    await w.setRole(slack, 'alice', 'approver');
    await w.setRole(telegram, 'alice', 'approver');
    await link('alice', slack, telegram);
    w.workflow('gated', GATED);
    await slack.sendCommand('alice', 'run gated ship it');
    const cp = await w.message(telegram, /Checkpoint build:1/);
    const runId = runIdOf(cp);
    const press = await telegram.press('alice', cp, 'Approve');
    expect(await telegram.answerTo(press)).toMatch(
      /^Four-eyes rule: .* started this run and cannot approve checkpoint build:1/,
    );
    expect((await w.bridge.orchestrator.getRun(runId)).checkpoint!.votes).toEqual([]);
    // A vote sent with a bare actor (as `phasebridge approve` sends it over the control socket)
    // counts the person too: the bridge reads the links when it commits the vote.
    const bare = await w.bridge.orchestrator.command(runId, 'bare-actor-approve', {
      type: 'answerCheckpoint',
      checkpointId: 'build:1',
      answer: 'approve',
      actor: { id: `telegram:${telegram.userId('alice')}` },
    });
    expect(bare.ok ? 'committed' : bare.rejection.message).toMatch(/^four-eyes rule: /);

    // `phasebridge people` lists her with both identities and their roles per chat.
    const listed = await runCli(w, ['people', '--json']);
    expect(listed.code, listed.err).toBe(0);
    const people = (JSON.parse(listed.out) as PeopleJson).people;
    expect(people).toHaveLength(1);
    expect(people[0]!.identities.map((i) => i.id).sort()).toEqual(
      [`slack:${slack.userId('alice')}`, `telegram:${telegram.userId('alice')}`].sort(),
    );
    expect(people[0]!.identities[0]!.roles).toEqual([
      { where: expect.stringMatching(/^(slack|telegram):/), role: 'approver' },
    ]);

    // Split off, her Telegram account is another person again: its approval counts.
    const unlink = await runCli(w, ['people', 'unlink', `telegram:${telegram.userId('alice')}`]);
    expect(unlink.code, unlink.err).toBe(0);
    expect(unlink.out).toMatch(/is no longer .*Roles are unchanged/);
    const after = await telegram.press('alice', cp, 'Approve');
    expect(await telegram.answerTo(after)).toBe('Approved — 1 of 1 approval; the run moves on');
  });

  it('codes are single-use, expire, need a role, and a forged, own or stale code is refused out loud', async () => {
    const code = await codeFrom('bob', telegram);
    await slack.sendCommand('bob', 'link ZZZZZZZZZZ');
    expect(await said(slack, /link code is not valid/)).toMatch(/Check it/);
    await telegram.sendCommand('bob', `link ${code}`);
    expect(await said(telegram, /link code is your own/)).toBeTruthy();
    await slack.sendCommand('carol', `link ${code}`);
    expect(await said(slack, /You have no role anywhere/)).toBeTruthy();

    // Dave claims Bob's code; Bob sees who it was and cancels: nobody is linked.
    await slack.sendCommand('dave', `link ${code}`);
    expect(await said(telegram, /sent your link code/)).toContain(slack.userId('dave'));
    await telegram.sendCommand('bob', 'link cancel');
    expect(await said(telegram, /Link cancelled/)).toContain(slack.userId('dave'));
    expect(await said(slack, /cancelled by the code/)).toBeTruthy();
    await slack.sendCommand('bob', `link ${code}`);
    expect(await said(slack, /link code was already used/)).toBeTruthy();
    expect(await w.bridge.repos.personLinks.list()).toEqual([]);

    // A stale code: ten minutes went by (the stored expiry moved into the past).
    const stale = await codeFrom('bob', telegram);
    const db = new Database(path.join(w.home, 'bridge.db'));
    try {
      db.prepare('UPDATE link_codes SET expires_at = ? WHERE used_at IS NULL').run(Date.now() - 1);
    } finally {
      db.close();
    }
    await slack.sendCommand('bob', `link ${stale}`);
    expect(await said(slack, /link code has expired/)).toMatch(/codes last 10 minutes/);
    await telegram.sendCommand('bob', 'link confirm');
    expect(await said(telegram, /No link to confirm/)).toBeTruthy();
    expect(await w.bridge.repos.personLinks.list()).toEqual([]);
  });
});

interface AuditRow {
  actor: string;
  actorName: string;
  person?: string;
}

interface PeopleJson {
  people: {
    person: string;
    identities: { id: string; roles: { where: string; role: string }[] }[];
  }[];
}
