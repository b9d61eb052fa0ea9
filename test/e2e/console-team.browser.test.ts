/**
 * A team member in a real browser (headless chromium through playwright-core) against the real
 * bridge and the fake Telegram: `/console` in the team group sends Alice (an approver there) a
 * sign-in link in her private chat; she opens it, presses Sign in, retries the run's failed
 * step from its run page, approves the checkpoint that follows, and is refused the Access page
 * (an admin page). The decision and the audit name her. The run page with its controls fits
 * 375 px and passes an axe scan.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningBridge } from '../../src/app/bridge.ts';
import type { FakeTelegram } from '../fakes/telegram.ts';
import { findChromium, inCi, launchChromium, missingChromiumBanner } from './chromium.ts';
import { axeProblems, widths } from './page-checks.ts';
import { APPEAR_MS, startTeamBridge, type TeamBridge, until } from './team-bridge.ts';

const TEAM = { id: -4001, type: 'supergroup' as const, title: 'Team' };
const ALICE = { id: 801, first_name: 'Alice', username: 'alice' };

const chromiumPath = findChromium();

describe.skipIf(!chromiumPath && !inCi())('a team member in the console, in a real browser', () => {
  let team: TeamBridge;
  let fake: FakeTelegram;
  let bridge: RunningBridge;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    if (!chromiumPath) throw new Error(missingChromiumBanner());
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20 exit=1';
    team = await startTeamBridge({ teamId: TEAM.id, port: 7797, people: [[ALICE, 'approver']] });
    ({ fake, bridge } = team);
    browser = await launchChromium(chromiumPath!);
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(`console: ${m.text()}`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await team?.dispose();
  });

  it('signs in from the link in her private chat, retries, approves, and is refused Access', async () => {
    fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
    const runId = await until('the run', async () => (await bridge.orchestrator.listRuns())[0]?.id);
    await until('the failed step', async () =>
      (await bridge.orchestrator.getRun(runId)).status === 'blocked' ? true : undefined,
    );

    // The link comes to her private chat; the page opens it and she presses Sign in.
    await team.signIn(browser, ALICE, page);

    await page.goto(`${bridge.url}/runs/${runId}`);
    await page.locator('#conn', { hasText: 'live' }).waitFor({ timeout: APPEAR_MS });
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
    await page.getByRole('button', { name: 'Retry failed step' }).click();
    const card = page.locator('#checkpoint', { hasText: 'Checkpoint plan:1' });
    await card.waitFor({ timeout: APPEAR_MS });
    for (const width of [375, 1280]) {
      await page.setViewportSize({ width, height: 800 });
      const w = await widths(page);
      expect(w.scrollWidth, `run page at ${width} px`).toBeLessThanOrEqual(w.viewport);
      expect(await axeProblems(page), `run page at ${width} px`).toEqual([]);
    }
    await card.getByRole('button', { name: 'Approve', exact: true }).click();
    await page
      .locator('#decisions')
      .getByText(/approved checkpoint plan:1 by @alice/)
      .waitFor({ timeout: APPEAR_MS });

    const plan = (await bridge.orchestrator.getRun(runId)).checkpoints.find(
      (c) => c.id === 'plan:1',
    );
    expect(plan?.decision?.by.map((a) => a.id)).toEqual([`telegram:${ALICE.id}`]);
    const audit = await bridge.repos.audit.listRecent({ actor: `telegram:${ALICE.id}` });
    expect(audit.filter((e) => e.outcome === 'allowed').map((e) => e.action)).toEqual(
      expect.arrayContaining(['command:retry', 'command:approve', 'command:console']),
    );

    expect(problems).toEqual([]);
    // An admin page: refused (the browser logs the 403 itself, so it is checked after).
    const access = await page.goto(`${bridge.url}/admin/access`);
    expect(access?.status()).toBe(403);
    expect(await page.textContent('body')).toContain('need the admin role');
  });
});
