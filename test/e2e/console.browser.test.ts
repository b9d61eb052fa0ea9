/**
 * The web console in a real browser (headless chromium through playwright-core) against the real
 * bridge: log in with the printed link, start the demo run by typing, follow it live over SSE,
 * approve both checkpoints with the buttons, see it completed, then read the runs pages. A
 * screenshot of the finished run is kept in test-artifacts/console-finished.png.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCost } from '../../src/bridges/web/pages/runs.ts';
import type { RunState } from '../../src/engine/model.ts';
import { type E2eBridge, startE2eBridge } from './bridge.ts';
import { findChromium, inCi, launchChromium, missingChromiumBanner } from './chromium.ts';

const ARTIFACTS = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../test-artifacts',
);
const SCREENSHOT = path.join(ARTIFACTS, 'console-finished.png');
/** Generous upper bound for anything to appear (not a timing assertion: it only avoids hanging). */
const APPEAR_MS = 15_000;

const chromiumPath = findChromium();
if (!chromiumPath && !inCi()) process.stderr.write(missingChromiumBanner());

let e2e: E2eBridge;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Uncaught page errors and console errors (CSP violations, failed loads), all must stay empty. */
const pageProblems: string[] = [];
/** The run the story starts; the later tests read it. */
let run: RunState | undefined;

/** A message of the console chat containing `text` (optionally one with a given button). */
function message(text: string | RegExp, button?: string): Locator {
  const base = page.locator('#messages article.msg', { hasText: text });
  return button ? base.filter({ has: page.getByRole('button', { name: button }) }) : base;
}

async function visible(locator: Locator): Promise<Locator> {
  await locator.first().waitFor({ state: 'visible', timeout: APPEAR_MS });
  return locator.first();
}

describe.skipIf(!chromiumPath && !inCi())('web console in a real browser', () => {
  beforeAll(async () => {
    if (!chromiumPath) throw new Error(missingChromiumBanner());
    e2e = await startE2eBridge();
    browser = await launchChromium(chromiumPath);
    context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    page = await context.newPage();
    page.on('pageerror', (err) => pageProblems.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') pageProblems.push(`console: ${m.text()} (${m.location().url})`);
    });
  }, 40_000);

  afterAll(async () => {
    await browser?.close();
    await e2e?.dispose();
  });

  it('runs the demo from the console: live status, two approvals, completed', async () => {
    const { bridge } = e2e;
    await page.goto(bridge.loginUrl);
    // The login link sets the session and redirects to a URL without the token.
    expect(new URL(page.url()).search).toBe('');
    await visible(page.locator('#conn', { hasText: 'live' }));
    // A marker that a reload would lose: every update below must arrive over SSE.
    await page.evaluate(() => Object.assign(globalThis, { pbNoReload: true }));

    const box = page.getByRole('textbox', { name: 'Command' });
    await box.fill('run demo add a login page');
    await box.press('Enter');
    await visible(message('› run demo add a login page'));
    await expect.poll(() => box.inputValue()).toBe('');

    const status = await visible(message(/^Run \S+ · Demo/));
    const runId = /^Run (\S+) ·/.exec((await status.textContent()) ?? '')![1]!;
    const first = await visible(message(`Checkpoint plan:1 — run ${runId}`, 'Approve'));
    await visible(message(`Run ${runId} · Demo`).filter({ hasText: 'waiting for approval' }));
    await first.getByRole('button', { name: 'Approve' }).click();
    // The presser gets a private answer as a toast.
    await visible(page.locator('#toasts .toast', { hasText: 'Approved' }));

    // The answered checkpoint is edited in place: who decided, and no buttons any more.
    const decided = await visible(message('Checkpoint plan:1').filter({ hasText: 'Approved by' }));
    expect(await decided.getByRole('button').count()).toBe(0);
    const second = await visible(message(`Checkpoint review:1 — run ${runId}`, 'Approve'));
    await second.getByRole('button', { name: 'Approve' }).click();

    await visible(message(`Run ${runId} Completed`).filter({ hasNotText: 'Checkpoint' }));
    await visible(message(`Run ${runId} · Demo`).filter({ hasText: 'Completed' }));
    expect(await page.locator('#messages button[data-token]').count()).toBe(0);
    expect(await page.evaluate(() => 'pbNoReload' in globalThis)).toBe(true);
    run = await bridge.orchestrator.getRun(runId);
    expect(run.status).toBe('completed');

    // Toasts (clicking one dismisses it) would cover part of the finished run in the screenshot.
    await page.locator('#toasts .toast').evaluateAll((toasts) => {
      for (const t of toasts) t.click();
    });
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(pageProblems).toEqual([]);
  }, 45_000);

  it("lists the run and shows its page: steps, tokens and cost, and a step's log", async () => {
    expect(run, 'the console story must have run first').toBeDefined();
    const done = run!;
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.waitForURL(/\/runs$/);
    const row = page.getByRole('row').filter({ hasText: done.id });
    expect(await row.locator('.st').textContent()).toBe('completed');
    await row.getByRole('link', { name: done.id }).click();
    await page.waitForURL(`**/runs/${encodeURIComponent(done.id)}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(done.id);

    const steps = page.locator('h2:text-is("Steps") + table');
    const headers = await steps.locator('thead th').allInnerTexts();
    expect(headers).toEqual(expect.arrayContaining(['Tokens in', 'Tokens out', 'Cost']));
    const cells: string[][] = [];
    for (const tr of await steps.locator('tbody tr').all()) {
      cells.push((await tr.locator('td').allTextContents()).map((t) => t.trim()));
    }
    const n = (v: number) => v.toLocaleString('en-US');
    expect(cells.slice(0, -1)).toEqual(
      done.steps.map((s, i) => [
        String(i + 1),
        s.id,
        s.agent,
        'completed',
        String(s.attempt),
        expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/),
        expect.stringMatching(/^\d+ ms$|^\d+s$/),
        n(s.telemetry.tokensIn),
        n(s.telemetry.tokensOut),
        formatCost(s.telemetry.costUsd),
        'log',
      ]),
    );
    expect(done.steps.every((s) => s.telemetry.tokensIn > 0 && s.telemetry.costUsd > 0)).toBe(true);
    const sum = (pick: (s: RunState['steps'][number]) => number) =>
      done.steps.reduce((a, s) => a + pick(s), 0);
    expect(cells.at(-1)).toEqual(
      expect.arrayContaining([
        'Total',
        n(sum((s) => s.telemetry.tokensIn)),
        n(sum((s) => s.telemetry.tokensOut)),
        formatCost(sum((s) => s.telemetry.costUsd)),
      ]),
    );

    await steps.getByRole('row').filter({ hasText: 'plan' }).getByRole('link').click();
    await page.waitForURL(/\/logs\/plan$/);
    expect(await page.locator('main pre').textContent()).toContain('demo agent finished');
    expect(pageProblems).toEqual([]);
  }, 30_000);

  it('answers 401 to requests without the session, and the login link works only once', async () => {
    const { url, loginUrl } = e2e.bridge;
    const page401 = await fetch(`${url}/`, { headers: { accept: 'text/html' } });
    expect(page401.status).toBe(401);
    expect(await page401.text()).toContain('Not logged in');
    for (const p of ['/runs', '/events', '/metrics']) {
      expect((await fetch(`${url}${p}`)).status, p).toBe(401);
    }
    const runsBefore = (await e2e.bridge.orchestrator.listRuns()).length;
    const post = await fetch(`${url}/api/command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', origin: url },
      body: JSON.stringify({ text: 'run demo sneaky', key: 'k1' }),
    });
    expect(post.status).toBe(401);
    expect((await e2e.bridge.orchestrator.listRuns()).length).toBe(runsBefore);

    // The same request with the browser's session cookie is served.
    const cookie = (await context.cookies(url)).map((c) => `${c.name}=${c.value}`).join('; ');
    expect((await fetch(`${url}/runs`, { headers: { cookie } })).status).toBe(200);

    // The printed link was used by the first test: a fresh browser gets "not valid".
    const stranger = await browser.newContext();
    try {
      const res = await (await stranger.newPage()).goto(loginUrl);
      expect(res?.status()).toBe(401);
    } finally {
      await stranger.close();
    }
  }, 20_000);
});
