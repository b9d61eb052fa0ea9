/**
 * Signing in to the console through chat, end to end: the real assembled bridge, the real
 * Telegram adapter against the fake Bot API, real HTTP and the real CLI. `/console` in a bound
 * group sends the presser a one-time link in their private chat (never in the group); the link
 * signs them in (GET shows the Sign in page, the POST opens the session); from the run page an
 * approver approves the checkpoint and the decision and audit name them, a viewer is refused;
 * `phasebridge logins` lists the sessions and `logins revoke <id>` signs one out at once (its
 * open stream too). Four-eyes counts a console person as themselves; the run page's Retry and
 * Cancel act as the person and show in the group that follows the run.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { runCliAsync } from '../cli/support.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { signIn } from '../support/console-login.ts';
import { slow } from '../support/slowdown.ts';

const TEAM = { id: -3001, type: 'supergroup' as const, title: 'Team' };
const ALICE = { id: 701, first_name: 'Alice', username: 'alice' };
const BOB = { id: 702, first_name: 'Bob', username: 'bob' };
const CAROL = { id: 703, first_name: 'Carol', username: 'carol' };
/** The console's public address as chat links carry it; the test opens them on the real port. */
const PUBLIC = 'http://localhost:7799';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + slow(30_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface World {
  bridge: RunningBridge;
  fake: FakeTelegram;
  home: string;
  dir: string;
}

async function start(publicUrl: string | null = PUBLIC, behaviour = 'sleep=20'): Promise<World> {
  process.env.DEMO_AGENT_BEHAVIOUR = behaviour;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-console-chat-'));
  const home = path.join(dir, 'home');
  const fake = await FakeTelegram.start();
  fake.addChat(TEAM);
  fake.addChat({ id: ALICE.id, type: 'private' });
  fake.addChat({ id: BOB.id, type: 'private' });
  const config = loadConfig({
    env: {
      PHASEBRIDGE_HOME: home,
      PHASEBRIDGE_PORT: '0',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      ...(publicUrl !== null && { PHASEBRIDGE_PUBLIC_URL: publicUrl }),
    },
    cwd: dir,
  });
  const bridge = await startBridge(config, createLogger({ level: 'silent' }), {
    editIntervalMs: 10,
  });
  cleanups.push(async () => {
    await bridge.stop();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const binding = await bridge.repos.bindings.bind({
    chatRef: `telegram:${TEAM.id}`,
    workspace: bridge.workspace,
  });
  const scope = { bindingId: binding.id };
  await bridge.repos.allowlist.allow(scope, 'telegram', String(ALICE.id), 'approver');
  await bridge.repos.allowlist.allow(scope, 'telegram', String(BOB.id), 'viewer');
  return { bridge, fake, home, dir };
}

/** `/console` in the group by `who`; the link that arrived in their private chat. */
async function consoleLink(w: World, who: typeof ALICE): Promise<string> {
  const before = w.fake.botMessages(who.id).length;
  w.fake.userSends({ chat: TEAM, from: who, text: '/console' });
  const dm = await until('the private sign-in link', () => w.fake.botMessages(who.id)[before]);
  const link = /(http:\/\/\S+\?token=[A-Za-z0-9_%-]+)/.exec(dm.text ?? '')?.[1];
  expect(link, dm.text).toBeDefined();
  expect(link!.startsWith(`${PUBLIC}/?token=`)).toBe(true);
  return link!.replace(PUBLIC, w.bridge.url);
}

async function cookieOf(link: string): Promise<string> {
  const res = await signIn(link);
  expect(res.status).toBe(303);
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** Presses a run page button as its script does: the page's CSRF token, JSON back. */
async function runAction(w: World, cookie: string, run: string, action: string, reason?: string) {
  const page = await fetch(`${w.bridge.url}/runs/${run}`, { headers: { cookie } });
  expect(page.status).toBe(200);
  const csrf = /name="csrf-token" content="([^"]+)"/.exec(await page.text())?.[1] ?? '';
  const res = await fetch(`${w.bridge.url}/api/run-action`, {
    method: 'POST',
    headers: {
      cookie,
      'content-type': 'application/json',
      accept: 'application/json',
      'x-csrf-token': csrf,
    },
    body: JSON.stringify({ run, action, ...(reason !== undefined && { reason }) }),
  });
  return { status: res.status, body: (await res.json()) as { replies?: string[] } };
}

/** The CLI as a person runs it; not spawnSync, which would block the bridge this test runs. */
function cli(home: string, cwd: string, ...args: string[]) {
  return runCliAsync(args, home, cwd);
}

describe('signing in to the console through chat', () => {
  it('sends the link privately, signs the person in as themselves, and revokes at once', async () => {
    const w = await start();
    w.fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
    await until('the plan checkpoint', () =>
      w.fake
        .botMessages(TEAM.id)
        .find((m) => JSON.stringify(m.replyMarkup ?? {}).includes('Approve')),
    );
    const run = (await w.bridge.orchestrator.listRuns())[0]!.id;

    // A viewer signs in and is refused approving; the checkpoint stays open.
    const bobLink = await consoleLink(w, BOB);
    expect(w.fake.botMessages(TEAM.id).some((m) => (m.text ?? '').includes('?token='))).toBe(false);
    const bobPage = await fetch(bobLink, { redirect: 'manual' });
    expect(await bobPage.text()).toContain('Sign in');
    const bob = await cookieOf(bobLink);
    const refused = await runAction(w, bob, run, 'approve');
    expect(refused.body.replies?.join('\n')).toContain('You are not allowed to use approve here.');
    expect((await w.bridge.orchestrator.getRun(run)).checkpoint?.stepId).toBe('plan');
    // Access and Audit are for admins.
    expect((await fetch(`${w.bridge.url}/admin/audit`, { headers: { cookie: bob } })).status).toBe(
      403,
    );

    // An approver signs in and approves as themselves.
    const alice = await cookieOf(await consoleLink(w, ALICE));
    const approved = await runAction(w, alice, run, 'approve');
    expect(approved.status).toBe(200);
    expect(approved.body.replies?.join('\n')).toMatch(/Checkpoint \S+ of run \S+: /);
    const state = await until('the plan decided', async () => {
      const s = await w.bridge.orchestrator.getRun(run);
      const plan = s.checkpoints.find((c) => c.stepId === 'plan');
      return plan?.decision ? plan : undefined;
    });
    expect(state.decision?.by.map((a) => a.id)).toEqual([`telegram:${ALICE.id}`]);
    const audit = await w.bridge.repos.audit.listRecent({ action: 'command:approve', limit: 10 });
    expect(audit.map((e) => [e.actor, e.outcome]).sort()).toEqual([
      [`telegram:${ALICE.id}`, 'allowed'],
      [`telegram:${BOB.id}`, 'refused'],
    ]);

    // The CLI lists both sessions and revokes Bob's: his next request is refused at once.
    const listed = await cli(w.home, w.dir, 'logins');
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toContain(`telegram:${ALICE.id} (@alice) via telegram:${TEAM.id}`);
    const bobLine = listed.out.split('\n').find((l) => l.includes(`telegram:${BOB.id}`)) ?? '';
    const bobId = /^• (\S+) —/.exec(bobLine)?.[1];
    expect(bobId).toBeDefined();
    // Bob's console page is open: its event stream carries the chat until his session ends.
    const stream = await fetch(`${w.bridge.url}/events`, { headers: { cookie: bob } });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    const streamEnded = (async () => {
      for (;;) if ((await reader.read()).done) return true;
    })();
    const revoked = await cli(w.home, w.dir, 'logins', 'revoke', bobId!);
    // The stderr in the message: under load this once exited 2 and the reason was lost.
    expect(revoked.code, revoked.err).toBe(0);
    expect(revoked.out).toContain(`Console session ${bobId} is revoked`);
    expect((await fetch(`${w.bridge.url}/runs`, { headers: { cookie: bob } })).status).toBe(401);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), slow(15_000));
    });
    expect(await Promise.race([streamEnded, deadline])).toBe(true);
    clearTimeout(timer);
    expect((await fetch(`${w.bridge.url}/runs`, { headers: { cookie: alice } })).status).toBe(200);
    const again = await cli(w.home, w.dir, 'logins', 'revoke', bobId!);
    expect(again.code).toBe(1);
    expect(again.err).toContain(`no console session ${bobId}`);
  });

  it('says so in the chat, without a link, when no private message can be sent', async () => {
    const w = await start();
    await w.bridge.repos.allowlist.allow('global', 'telegram', String(CAROL.id), 'viewer');
    // Carol never opened a private chat with the bot: Telegram refuses the message.
    w.fake.userSends({ chat: TEAM, from: CAROL, text: '/console' });
    const answer = await until('the answer in the group', () =>
      w.fake.botMessages(TEAM.id).find((m) => (m.text ?? '').includes('private message')),
    );
    expect(answer.text).toContain('no sign-in link was sent');
    expect(answer.text).not.toContain('token=');
  });

  it('answers how to set PHASEBRIDGE_PUBLIC_URL when the console has no address', async () => {
    const w = await start(null);
    w.fake.userSends({ chat: TEAM, from: ALICE, text: '/console' });
    const answer = await until('the answer in the group', () =>
      w.fake.botMessages(TEAM.id).find((m) => (m.text ?? '').includes('PHASEBRIDGE_PUBLIC_URL')),
    );
    expect(answer.text).toContain('no public address');
    expect(w.fake.botMessages(ALICE.id)).toEqual([]);
  });

  it('retries the failed step and cancels the run from the run page, as the person, seen in chat', async () => {
    const w = await start(PUBLIC, 'sleep=20 exit=1');
    w.fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
    const run = await until('the run', async () => (await w.bridge.orchestrator.listRuns())[0]?.id);
    await until('the failed step', async () =>
      (await w.bridge.orchestrator.getRun(run)).status === 'blocked' ? true : undefined,
    );
    const bob = await cookieOf(await consoleLink(w, BOB));
    const alice = await cookieOf(await consoleLink(w, ALICE));
    const page = await (
      await fetch(`${w.bridge.url}/runs/${run}`, { headers: { cookie: alice } })
    ).text();
    expect(page).toContain('Retry failed step');
    expect(page).toContain('Cancel run');

    // A viewer may do neither; the run stays as it was.
    const refusedRetry = await runAction(w, bob, run, 'retry');
    expect(refusedRetry.body.replies?.join('\n')).toContain(
      'You are not allowed to use retry here.',
    );
    const refusedCancel = await runAction(w, bob, run, 'cancel', 'stop it');
    expect(refusedCancel.body.replies?.join('\n')).toContain(
      'You are not allowed to use cancel here.',
    );
    expect((await w.bridge.orchestrator.getRun(run)).status).toBe('blocked');

    // The agent works again: Alice's retry runs the step, and the group gets its checkpoint.
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
    const retried = await runAction(w, alice, run, 'retry');
    expect(retried.status).toBe(200);
    await until('the plan checkpoint in the group', () =>
      w.fake
        .botMessages(TEAM.id)
        .find((m) => JSON.stringify(m.replyMarkup ?? {}).includes('Approve')),
    );

    const saysCancelled = () =>
      w.fake.botMessages(TEAM.id).find((m) => /cancelled/i.test(m.text ?? ''));
    expect(saysCancelled()).toBeUndefined();
    const cancelled = await runAction(w, alice, run, 'cancel', 'not needed any more');
    expect(cancelled.status).toBe(200);
    expect((await w.bridge.orchestrator.getRun(run)).status).toBe('cancelled');
    await until('the cancellation in the group', saysCancelled);
    const after = await (
      await fetch(`${w.bridge.url}/runs/${run}`, { headers: { cookie: alice } })
    ).text();
    expect(after).not.toContain('Cancel run');
    const audit = await w.bridge.repos.audit.listRecent({
      actor: `telegram:${ALICE.id}`,
      limit: 20,
    });
    const actions = audit.filter((e) => e.outcome === 'allowed').map((e) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['command:retry', 'command:cancel']));
    const state = await w.bridge.orchestrator.getRun(run);
    expect(state.outcome?.by?.id).toBe(`telegram:${ALICE.id}`);
  });

  it('re-opens an expired checkpoint from the run page as the approver; a viewer is refused', async () => {
    const w = await start();
    fs.mkdirSync(path.join(w.bridge.workspace, 'workflows'), { recursive: true });
    fs.writeFileSync(
      path.join(w.bridge.workspace, 'workflows', 'kept.workflow.yaml'),
      'id: kept\nname: Kept\nsteps:\n  - id: build\n    agent: demo\n    prompt: build it\n    checkpoint:\n      when: after\n      expiresIn: 300ms\n      onExpiry: keep\n',
    );
    w.fake.userSends({ chat: TEAM, from: ALICE, text: '/run kept ship it' });
    const run = await until('the run', async () => (await w.bridge.orchestrator.listRuns())[0]?.id);
    await until('the expiry', async () =>
      (await w.bridge.orchestrator.getRun(run)).checkpoint?.expiredAt !== undefined
        ? true
        : undefined,
    );
    const alice = await cookieOf(await consoleLink(w, ALICE));
    const bob = await cookieOf(await consoleLink(w, BOB));
    const page = await (
      await fetch(`${w.bridge.url}/runs/${run}`, { headers: { cookie: alice } })
    ).text();
    expect(page).toContain('Re-open checkpoint');
    expect(page).toContain('<b>expired</b>');

    const refused = await runAction(w, bob, run, 'reopen');
    expect(refused.body.replies?.join('\n')).toContain('You are not allowed to use reopen here.');
    expect((await w.bridge.orchestrator.getRun(run)).checkpoint?.id).toBe('build:1');

    const reopened = await runAction(w, alice, run, 'reopen');
    expect(reopened.status).toBe(200);
    expect(reopened.body.replies?.join('\n')).toContain('Re-opened the expired checkpoint of run');
    const state = await w.bridge.orchestrator.getRun(run);
    expect(state.checkpoint?.id).toBe('build:2');
    expect(state.checkpoints.at(-1)?.withdrawn?.reason).toBe('expired; re-opened by @alice');
    await until('the new checkpoint in the group', () =>
      w.fake.botMessages(TEAM.id).find((m) => /Checkpoint build:2/.test(m.text ?? '')),
    );
    const audit = await w.bridge.repos.audit.listRecent({ actor: `telegram:${ALICE.id}` });
    expect(audit.map((e) => [e.action, e.outcome])).toContainEqual(['command:reopen', 'allowed']);
  });

  it('four-eyes counts the console person as themselves, in the console and in chat', async () => {
    const w = await start();
    const dave = { id: 704, first_name: 'Dave', username: 'dave' };
    w.fake.addChat({ id: dave.id, type: 'private' });
    const team = await w.bridge.repos.bindings.find(`telegram:${TEAM.id}`, null);
    await w.bridge.repos.allowlist.allow(
      { bindingId: team!.id },
      'telegram',
      String(dave.id),
      'approver',
    );
    fs.mkdirSync(path.join(w.bridge.workspace, 'workflows'), { recursive: true });
    fs.writeFileSync(
      path.join(w.bridge.workspace, 'workflows', 'gated.workflow.yaml'),
      'id: gated\nname: Gated\nsteps:\n  - id: build\n    agent: demo\n    prompt: build it\n    checkpoint:\n      when: after\n      approvals: 2\n      fourEyes: true\n',
    );
    w.fake.userSends({ chat: TEAM, from: ALICE, text: '/run gated ship the thing' });
    const cp = await until('the gated checkpoint', () =>
      w.fake.botMessages(TEAM.id).find((m) => /Checkpoint build:1/.test(m.text ?? '')),
    );
    const run = (await w.bridge.orchestrator.listRuns())[0]!.id;

    // Alice started the run: from the console she is still the starter.
    const alice = await cookieOf(await consoleLink(w, ALICE));
    const own = await runAction(w, alice, run, 'approve');
    expect(own.body.replies?.join('\n')).toMatch(/@alice started this run/);
    // Dave's console vote and his button in the group are one person's: the second is refused.
    const daveCookie = await cookieOf(await consoleLink(w, dave));
    const first = await runAction(w, daveCookie, run, 'approve');
    expect(first.body.replies?.join('\n')).toContain('1 of 2');
    w.fake.userPresses({ chatId: TEAM.id, messageId: cp.message_id, from: dave, label: 'Approve' });
    await until('the second vote refused', async () => {
      const audit = await w.bridge.repos.audit.listRecent({ actor: `telegram:${dave.id}` });
      return audit.some((e) => e.outcome !== 'allowed' && /already voted/.test(e.detail ?? ''))
        ? true
        : undefined;
    });
    const votes = (await w.bridge.orchestrator.getRun(run)).checkpoint!.votes;
    expect(votes.map((v) => v.actor.id)).toEqual([`telegram:${dave.id}`]);
  });

  it("shows a person only the runs of their chat's workspace; the local admin sees all", async () => {
    const w = await start();
    const OTHER = { id: -3002, type: 'supergroup' as const, title: 'Other team' };
    const erin = { id: 705, first_name: 'Erin', username: 'erin' };
    w.fake.addChat(OTHER);
    const otherWs = path.join(w.dir, 'other-ws');
    fs.mkdirSync(otherWs);
    const other = await w.bridge.repos.bindings.bind({
      chatRef: `telegram:${OTHER.id}`,
      workspace: otherWs,
    });
    await w.bridge.repos.allowlist.allow(
      { bindingId: other.id },
      'telegram',
      String(erin.id),
      'operator',
    );
    w.fake.userSends({ chat: OTHER, from: erin, text: '/run demo their secret plan' });
    w.fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo our login page' });
    const runs = await until('both runs', async () => {
      const all = await w.bridge.orchestrator.listRuns();
      return all.length === 2 ? all : undefined;
    });
    const theirs = runs.find((r) => r.workspace === otherWs)!.id;
    const ours = runs.find((r) => r.workspace !== otherWs)!.id;

    const alice = await cookieOf(await consoleLink(w, ALICE));
    const get = (cookie: string, p: string) =>
      fetch(`${w.bridge.url}${p}`, { headers: { cookie, accept: 'text/html' } });
    expect((await get(alice, `/runs/${theirs}`)).status).toBe(404);
    expect((await get(alice, `/runs/${theirs}/logs/plan?attempt=1`)).status).toBe(404);
    expect((await get(alice, `/runs/${ours}`)).status).toBe(200);
    const list = await (await get(alice, '/runs')).text();
    expect(list).toContain(ours);
    expect(list).not.toContain(theirs);
    expect(list).not.toContain(otherWs);

    const admin = await cookieOf(w.bridge.loginUrl);
    expect((await get(admin, `/runs/${theirs}`)).status).toBe(200);
  });
});
