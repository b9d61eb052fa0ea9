/**
 * The queue page in a real browser (headless chromium through playwright-core) against the real
 * bridge (embedded SQLite queue) and the fake Telegram. Alice, an approver in the team group, and
 * Bob, an admin there, sign in through the links `/console` sends them privately. Alice is
 * refused the queue page and a queue action out loud, and the refusal is audited under her. Bob
 * sees the failed step's job (its agent exited 1) linked to its run, removes a stuck delayed job, retries the failed one
 * (the run gets its checkpoint), and the page follows the queue live while Alice approves in
 * chat. Every action is audited under Bob. The page fits 375 px and passes an axe scan.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridge } from '../../src/app/bridge.ts';
import type { FakeTelegram } from '../fakes/telegram.ts';
import { findChromium, inCi, launchChromium, missingChromiumBanner } from './chromium.ts';
import { axeProblems, screenshot, widths } from './page-checks.ts';
import { APPEAR_MS, startTeamBridge, type TeamBridge, until } from './team-bridge.ts';

const TEAM = { id: -4002, type: 'supergroup' as const, title: 'Team' };
const ALICE = { id: 811, first_name: 'Alice', username: 'alice' };
const BOB = { id: 812, first_name: 'Bob', username: 'bob' };
const STUCK = { runId: '2026-12-02T000000Z-stuck', stepId: 'build', attempt: 1, payload: {} };

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath && !inCi())('the queue page in a real browser', () => {
  let team: TeamBridge;
  let fake: FakeTelegram;
  let bridge: RunningBridge;
  let browser: Browser;
  const problems: string[] = [];

  /** A browser page signed in as `who` through the link `/console` sends them privately. */
  async function signIn(who: typeof ALICE): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    return team.signIn(browser, who, page);
  }

  beforeAll(async () => {
    if (!chromiumPath) throw new Error(missingChromiumBanner());
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20 exit=1';
    team = await startTeamBridge({
      teamId: TEAM.id,
      port: 7798,
      people: [
        [ALICE, 'approver'],
        [BOB, 'admin'],
      ],
    });
    ({ fake, bridge } = team);
    browser = await launchChromium(chromiumPath!);
  });

  afterAll(async () => {
    await browser?.close();
    await team?.dispose();
  });

  it('refuses Alice, lets Bob remove a stuck job and retry the failed one, live and audited', async () => {
    fake.userSends({ chat: TEAM, from: BOB, text: '/run demo add a login page' });
    const runId = await until('the run', async () => (await bridge.orchestrator.listRuns())[0]?.id);
    await until('the failed step', async () =>
      (await bridge.orchestrator.getRun(runId)).status === 'blocked' ? true : undefined,
    );
    const failedJob = `${runId}:plan:1`;
    await bridge.queue.enqueue(STUCK, { delayMs: 3_600_000 });

    // Alice (approver): the page and the action are refused out loud; nothing changes.
    const alice = await signIn(ALICE);
    const refusedPage = await alice.goto(`${bridge.url}/queue`);
    expect(refusedPage?.status()).toBe(403);
    expect(await alice.textContent('main')).toContain('needs the admin role');
    await alice.goto(`${bridge.url}/runs/${runId}`);
    const refused = await alice.evaluate(
      `(async () => {
        const csrf = document.querySelector('meta[name="csrf-token"]').content;
        const res = await fetch('/api/queue', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify({ op: 'remove', job: ${JSON.stringify(`${STUCK.runId}:build:1`)} }) });
        return { status: res.status, body: await res.json() };
      })()`,
    );
    expect(refused).toEqual({
      status: 403,
      body: { error: 'You are not allowed to remove queue jobs: that needs the admin role.' },
    });
    expect((await bridge.queue.jobCounts()).delayed).toBe(1);

    // Bob (admin): the failed job linked to its run and step, the stuck one removed.
    const bob = await signIn(BOB);
    await bob.getByRole('link', { name: 'Queue', exact: true }).click();
    await bob.waitForURL(/\/queue$/);
    // The agent exited 1: the job completed, its step failed; the row says so and offers Retry.
    const failedRow = bob.locator('#jobs-completed tr', { hasText: failedJob });
    await failedRow.waitFor({ timeout: APPEAR_MS });
    expect(await failedRow.getByRole('link', { name: runId }).getAttribute('href')).toBe(
      `/runs/${runId}`,
    );
    expect(await failedRow.textContent()).toContain('the agent exited 1');
    expect(await bob.locator('#count-delayed').textContent()).toBe('1');
    for (const width of [375, 1280]) {
      await bob.setViewportSize({ width, height: 800 });
      const w = await widths(bob);
      expect(w.scrollWidth, `queue page at ${width} px`).toBeLessThanOrEqual(w.viewport);
      expect(await axeProblems(bob), `queue page at ${width} px`).toEqual([]);
      await screenshot(bob, `queue-${width}`);
    }
    await bob.getByRole('button', { name: `Remove job ${STUCK.runId}:build:1` }).click();
    await bob.locator('#queue-flash', { hasText: 'Removed job' }).waitFor({ timeout: APPEAR_MS });
    expect(await bob.locator('#count-delayed').textContent()).toBe('0');
    expect((await bridge.queue.get(`${STUCK.runId}:build:1`))?.state).toBe('cancelled');

    // Retry: the run's retry as Bob; the run reaches its checkpoint.
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
    await bob.getByRole('button', { name: `Retry job ${failedJob}` }).click();
    await bob.waitForURL(/\/queue$/);
    await until('the checkpoint after the retry', async () =>
      (await bridge.orchestrator.getRun(runId)).checkpoint?.id === 'plan:1' ? true : undefined,
    );

    // Live: Alice approves in chat; the page counts the next step's job without a reload.
    await bob.locator('#conn', { hasText: 'live' }).waitFor({ timeout: APPEAR_MS });
    await bob.evaluate('window.__stillHere = true');
    const completedBefore = Number(await bob.locator('#count-completed').textContent());
    fake.userSends({ chat: TEAM, from: ALICE, text: `/approve ${runId}` });
    await until('the live count', async () =>
      Number(await bob.locator('#count-completed').textContent()) > completedBefore
        ? true
        : undefined,
    );
    expect(await bob.evaluate('window.__stillHere === true')).toBe(true);

    const audit = async (who: typeof ALICE) =>
      (await bridge.repos.audit.listRecent({ actor: `telegram:${who.id}` })).map((e) => [
        e.action,
        e.outcome,
        e.target,
      ]);
    expect(await audit(ALICE)).toContainEqual([
      'queue:remove',
      'refused',
      `${STUCK.runId}:build:1`,
    ]);
    const bobs = await audit(BOB);
    expect(bobs).toContainEqual(['queue:remove', 'allowed', `${STUCK.runId}:build:1`]);
    expect(bobs).toContainEqual(['queue:retry', 'allowed', failedJob]);
    expect(
      bobs.some(([action, outcome]) => action === 'command:retry' && outcome === 'allowed'),
    ).toBe(true);
    expect(problems).toEqual([]);
  });
});
