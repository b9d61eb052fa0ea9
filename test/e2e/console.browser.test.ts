/**
 * The web console in a real browser (headless chromium through playwright-core) against the real
 * bridge, as an operator uses it: log in with the printed link, start the demo run by typing,
 * follow the links from the chat to the run page, approve there, request changes with a reason,
 * approve again, everything arriving live over SSE; open a step's log and its diff (the
 * workspace is a git repository and the demo agent writes a file); take a `status` snapshot;
 * attach a photo to `run` and a file to a reply on its checkpoint;
 * filter and search the runs list; give a role on the Access page; filter and export the audit
 * log. Every page is checked at 1280 and 375 px for sideways scrolling, screenshotted to
 * test-artifacts/, and scanned with axe-core (no serious or critical violation).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatCost } from '../../src/bridges/web/pages/runs.ts';
import type { RunState } from '../../src/engine/model.ts';
import { slow } from '../support/slowdown.ts';
import { type E2eBridge, prepareGitWorkspace, startE2eBridge } from './bridge.ts';
import { findChromium, inCi, launchChromium, missingChromiumBanner } from './chromium.ts';
import { axeProblems, screenshot, widths } from './page-checks.ts';

/**
 * Generous upper bound for anything to appear (not a timing assertion: it only avoids hanging),
 * scaled by PHASEBRIDGE_TEST_SLOWDOWN: under load a Request changes and its re-run took over 15 s.
 */
const APPEAR_MS = slow(15_000);

const chromiumPath = findChromium();
if (!chromiumPath && !inCi()) process.stderr.write(missingChromiumBanner());

let e2e: E2eBridge;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Uncaught page errors and console errors (CSP violations, failed loads), all must stay empty. */
const pageProblems: string[] = [];
/** The run the story starts; the later tests read it. */
let runId = '';
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

/** Answers the run page's open checkpoint `id` with `button`, giving `reason` when set. */
async function answer(id: string, button: string, reason?: string): Promise<void> {
  const card = await visible(page.locator('#checkpoint', { hasText: `Checkpoint ${id}` }));
  if (reason !== undefined) await card.getByLabel(/Reason or feedback/).fill(reason);
  await card.getByRole('button', { name: button, exact: true }).click();
}

describe.skipIf(!chromiumPath && !inCi())('web console in a real browser', () => {
  beforeAll(async () => {
    if (!chromiumPath) throw new Error(missingChromiumBanner());
    e2e = await startE2eBridge(20, 'write=NOTES.md');
    const ws = e2e.bridge.workspace;
    prepareGitWorkspace(ws);
    browser = await launchChromium(chromiumPath);
    context = await browser.newContext({
      viewport: { width: 1280, height: 800 },
      baseURL: e2e.bridge.url,
    });
    // Playwright's own 30 s waits (clicks, navigations) scale like every other deadline.
    context.setDefaultTimeout(slow(30_000));
    page = await context.newPage();
    page.on('pageerror', (err) => pageProblems.push(`page error: ${err.message}`));
    page.on('console', (m) => {
      if (m.type() === 'error') pageProblems.push(`console: ${m.text()} (${m.location().url})`);
    });
  });

  afterAll(async () => {
    await browser?.close();
    await e2e?.dispose();
  });

  it('starts the demo from the console; the chat links the run id to its live page', async () => {
    // The link opens a confirm page (a chat's link preview cannot use it up); the button signs in.
    await page.goto(e2e.bridge.loginUrl);
    await Promise.all([
      page.waitForURL((u) => u.search === ''),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(new URL(page.url()).search).toBe('');
    await visible(page.locator('#conn', { hasText: 'live' }));
    const box = page.getByRole('textbox', { name: 'Command' });
    await box.fill('run demo add a login page');
    await box.press('Enter');
    const status = await visible(message(/^Run \S+ · Demo/));
    runId = /^Run (\S+) ·/.exec((await status.textContent()) ?? '')![1]!;
    const card = await visible(message(`Checkpoint plan:1 — run ${runId}`, 'Approve'));
    // The checkpoint's log is a link to its log page, not a server path.
    const logLink = card.getByRole('link', { name: /plan log/ });
    expect(await logLink.getAttribute('href')).toBe(`/runs/${runId}/logs/plan?attempt=1`);
    expect(await card.textContent()).not.toContain('/.phasebridge/runs/');

    // `status` answers with a snapshot that says when it was taken.
    await box.fill(`status ${runId}`);
    await box.press('Enter');
    const snap = await visible(message('Snapshot'));
    expect(await snap.textContent()).toMatch(
      /as of \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; not updated/,
    );

    await card.getByRole('link', { name: runId }).first().click();
    await page.waitForURL(`**/runs/${runId}`);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(runId);
    expect(pageProblems).toEqual([]);
  });

  it('approves, requests changes with a reason and approves again from the run page, live', async () => {
    await visible(page.locator('#conn', { hasText: 'live' }));
    // A marker that a reload would lose: every update below must arrive over SSE.
    await page.evaluate(() => Object.assign(globalThis, { pbNoReload: true }));
    await answer('plan:1', 'Approve');
    const decisions = page.locator('#decisions');
    await visible(decisions.getByText(/approved checkpoint plan:1 by admin/));

    // The review step offers a loop back to build: "Request changes" with what should change.
    await answer('review:1', 'Request changes');
    await visible(page.locator('#answer-result', { hasText: 'Write in the reason box' }));
    await answer('review:1', 'Request changes', 'add a test for the empty password');
    await visible(page.locator('#answer-result', { hasText: 'Checkpoint review:1' }));
    await visible(decisions.getByText(/changes requested checkpoint review:1 by admin/));
    await visible(page.locator('#feedback').getByText('add a test for the empty password'));
    // build runs again, then review opens its second checkpoint.
    await answer('review:2', 'Approve', 'looks good now');
    await visible(page.locator('#summary .st', { hasText: 'completed' }));
    expect(await page.locator('#checkpoint').textContent()).toContain('The run has ended');
    expect(await page.evaluate(() => 'pbNoReload' in globalThis)).toBe(true);

    run = await e2e.bridge.orchestrator.getRun(runId);
    expect(run.status).toBe('completed');
    const answers = run.checkpoints.map((c) => [c.id, c.decision?.answer, c.decision?.reason]);
    expect(answers).toEqual([
      ['plan:1', 'approve', undefined],
      ['review:1', 'loop', 'add a test for the empty password'],
      ['review:2', 'approve', 'looks good now'],
    ]);
    // The same command path as the chat: the chat shows the commands and their answers.
    await page.goto('/');
    await visible(message(`› changes ${runId} add a test for the empty password`));
    await visible(message(`Checkpoint review:1 of run ${runId}`));
    expect(pageProblems).toEqual([]);
  });

  it("shows the steps' tokens and cost, opens a step's log and its diff", async () => {
    const done = run!;
    await page.goto(`/runs/${runId}`);
    const rows = page.locator('#steps-table tbody tr');
    const n = (v: number) => v.toLocaleString('en-US');
    for (const [i, s] of done.steps.entries()) {
      const cells = (await rows.nth(i).locator('td').allTextContents()).map((t) => t.trim());
      expect(cells.slice(1, 5)).toEqual([s.id, s.agent, 'completed', String(s.attempt)]);
      expect(cells.slice(7, 10)).toEqual([
        n(s.telemetry.tokensIn),
        n(s.telemetry.tokensOut),
        formatCost(s.telemetry.costUsd),
      ]);
    }
    expect(done.steps.find((s) => s.id === 'build')!.attempt).toBe(2);
    const build = rows.filter({ hasText: 'build' }).first();
    await build.getByRole('link', { name: 'log' }).click();
    await page.waitForURL(/\/logs\/build\?attempt=2$/);
    expect(await page.locator('#log').textContent()).toContain('demo agent finished');
    expect(await page.locator('#log-state').textContent()).toContain('complete');
    await page.goBack();
    await build.getByRole('link', { name: 'diff' }).click();
    await page.waitForURL(/\/diffs\/build\?attempt=2$/);
    const diff = page.locator('pre.diff');
    expect(await diff.textContent()).toContain('NOTES.md');
    // This attempt added its own line; the first build's line and plan's are context.
    expect(await diff.locator('.add').allTextContents()).toEqual(['+build: add a login page']);
    // The user's repository is untouched: nothing staged, HEAD where it was.
    const staged = execFileSync('git', ['diff', '--cached', '--name-only'], {
      cwd: e2e.bridge.workspace,
      encoding: 'utf8',
    });
    expect(staged).toBe('');
    expect(pageProblems).toEqual([]);
  });

  it('filters and searches the runs list; ids do not wrap at 1280 px', async () => {
    await page.goto('/');
    const box = page.getByRole('textbox', { name: 'Command' });
    await box.fill('run demo write the release notes');
    await box.press('Enter');
    await visible(message('Checkpoint plan:1', 'Approve').filter({ hasNotText: runId }));
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    await page.waitForURL(/\/runs$/);
    await visible(page.locator('#runs-count', { hasText: 'Showing 2 of 2 runs' }));

    await page.getByLabel('Status').selectOption('awaiting');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=awaiting/);
    const ids = () => page.locator('#runs tbody tr td:first-child').allTextContents();
    expect(await ids()).toHaveLength(1);
    expect((await ids())[0]).not.toBe(runId);

    // Person waiting and age are filters of the URL too: a shared link shows the same list.
    await page.goto('/runs');
    await page.getByLabel('Person waiting').selectOption({ index: 1 });
    await page.getByLabel('Updated').selectOption('24h');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/waiting=.*age=24h/);
    expect(await ids()).toHaveLength(1);
    await page.goto('/runs?idle=7d');
    await visible(page.locator('#runs-count', { hasText: 'No run matches these filters.' }));
    // A bad value is answered, not ignored.
    const bad = await page.goto('/runs?status=stuck');
    expect(bad?.status()).toBe(400);
    expect(await page.textContent('main')).toContain('Unknown status "stuck"');
    pageProblems.length = 0; // the browser logs the 400 itself

    await page.goto('/runs');
    await page.getByLabel('Search id or spec').fill('login page');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/q=login/);
    expect(await ids()).toEqual([runId]);

    // One line per id: the link is no taller than one line of text.
    const link = page.getByRole('link', { name: runId });
    // The list refreshes live while the other run moves on: measure a rendered link.
    await visible(link);
    const lineHeight = await link.evaluate((el) =>
      Number.parseFloat(
        (
          globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string } }
        ).getComputedStyle(el).lineHeight,
      ),
    );
    await expect
      .poll(async () => (await link.boundingBox())?.height ?? Number.POSITIVE_INFINITY)
      .toBeLessThan(lineHeight * 1.5);
    // Exact time on hover.
    expect(await page.locator('#runs time').first().getAttribute('title')).toMatch(/UTC$/);
    expect(pageProblems).toEqual([]);
  });

  it('gives a role on the Access page and refuses a malformed user without a change', async () => {
    await page.getByRole('link', { name: 'Access', exact: true }).click();
    await page.waitForURL(/\/admin\/access$/);
    const form = page.getByRole('form', { name: 'Give a role' });
    await form.getByLabel('User (platform:id)').fill('alice');
    await form.getByRole('button', { name: 'Give role' }).click();
    await visible(page.getByRole('status').filter({ hasText: 'Refused' }));
    expect(await page.locator('#roles').textContent()).not.toContain('alice');

    await form.getByLabel('User (platform:id)').fill('telegram:123456');
    await form.getByLabel('Role').selectOption('approver');
    await form.getByRole('button', { name: 'Give role' }).click();
    await visible(
      page.getByRole('status').filter({ hasText: 'telegram:123456 is now approver globally' }),
    );
    const row = page.locator('#roles tr', { hasText: 'telegram:123456' });
    expect(await row.locator('td').nth(1).textContent()).toBe('approver');
    const roles = await e2e.bridge.repos.allowlist.list({ scope: 'global' });
    expect(roles.filter((r) => r.userId === '123456').map((r) => r.role)).toEqual(['approver']);
    expect(pageProblems).toEqual([]);
  });

  it('filters the audit log and exports it as CSV and JSON', async () => {
    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    await page.waitForURL(/\/admin\/audit$/);
    // The run page's Request changes went through the chat's command path: `command:changes`.
    await page.getByLabel('Action').fill('command:changes');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/action=command%3Achanges/);
    const rows = page.locator('#audit tbody tr');
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain(runId);

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'CSV' }).click(),
    ]);
    const csv = fs
      .readFileSync((await download.path())!, 'utf8')
      .trim()
      .split('\r\n');
    expect(csv[0]).toBe('id,at,actor,action,target,chatRef,outcome,detail,actorName');
    expect(csv).toHaveLength(2);
    expect(csv[1]).toContain(`"web:admin","command:changes","${runId}","web:console","allowed"`);

    const cookie = (await context.cookies(e2e.bridge.url))
      .map((c) => `${c.name}=${c.value}`)
      .join('; ');
    const json = await fetch(`${e2e.bridge.url}/admin/audit.json?actor=web%3Aadmin&action=allow`, {
      headers: { cookie },
    });
    expect(json.headers.get('content-type')).toContain('application/json');
    const entries = (await json.json()) as { action: string; target: string; outcome: string }[];
    expect(entries.map((e) => [e.action, e.target, e.outcome])).toEqual([
      ['allow', 'telegram:123456', 'allowed'],
    ]);
    expect(pageProblems).toEqual([]);
  });

  it("follows a running step's log live", async () => {
    await page.goto('/');
    const box = page.getByRole('textbox', { name: 'Command' });
    await box.fill('run slow take your time');
    await box.press('Enter');
    const status = await visible(message(/^Run \S+ · Slow/));
    const slowId = /^Run (\S+) ·/.exec((await status.textContent()) ?? '')![1]!;
    await page.goto(`/runs/${slowId}`);
    const row = page.locator('#steps-table tbody tr', { hasText: 'work' });
    await visible(row.locator('.st', { hasText: 'running' }));
    await row.getByRole('link', { name: 'log' }).click();
    await visible(page.locator('#log-state', { hasText: 'Live' }));
    await page.evaluate(() => Object.assign(globalThis, { pbNoReload: true }));
    await visible(page.locator('#log', { hasText: 'demo agent finished' }));
    await visible(page.locator('#log-state', { hasText: 'complete' }));
    const text = (await page.locator('#log').textContent()) ?? '';
    expect(text).toContain('::progress step 3/3');
    // Appended in place, each line once.
    expect(text.split('\n').filter((l) => l.includes('::progress step 1/3'))).toHaveLength(1);
    expect(await page.evaluate(() => 'pbNoReload' in globalThis)).toBe(true);
    expect(pageProblems).toEqual([]);
  });

  it('attaches a photo to run from the command box, and a file to a reply on its checkpoint', async () => {
    const ws = e2e.bridge.workspace;
    await page.goto('/');
    await visible(page.locator('#conn', { hasText: 'live' }));
    const jpeg = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(600, 7)]);
    await page
      .getByLabel('Attach files', { exact: true })
      .setInputFiles({ name: 'screen.jpg', mimeType: 'image/jpeg', buffer: jpeg });
    const box = page.getByRole('textbox', { name: 'Command' });
    await box.fill('run demo look at this screen');
    await box.press('Enter');
    await visible(message(/› run demo look at this screen\s*📎 screen\.jpg/));
    const card = await visible(
      page.locator('#messages article.msg', {
        hasText: /Checkpoint plan:1 — run \S+-look-at-this-screen/,
      }),
    );
    const lookId = /run (\S+)/.exec((await card.textContent()) ?? '')![1]!;
    const state = await e2e.bridge.orchestrator.getRun(lookId);
    expect(state.inputs).toEqual([expect.objectContaining({ kind: 'image', bytes: jpeg.length })]);
    expect(fs.readFileSync(`${ws}/${state.inputs![0]!.path}`).equals(jpeg)).toBe(true);

    // Reply on the checkpoint with a file: guidance for the step's next attempt.
    await card.getByRole('button', { name: 'Reply' }).click();
    const form = page.locator('form.reply-form');
    await form.getByRole('textbox', { name: 'Reply' }).fill('match this mockup');
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    await form
      .getByLabel('Attach files to the reply')
      .setInputFiles({ name: 'mockup.png', mimeType: 'image/png', buffer: png });
    await form.getByRole('button', { name: 'Send reply' }).click();
    const noted = await visible(
      message(
        /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/,
      ),
    );
    expect(await form.count()).toBe(0);
    // Only a run's status and checkpoint messages offer Reply (a reply elsewhere is chatter).
    expect(await noted.getByRole('button', { name: 'Reply' }).count()).toBe(0);
    expect(await visible(message(/^Run \S+-look-at-this-screen · Demo/))).toBeTruthy();
    expect(
      await message(/^Run \S+-look-at-this-screen · Demo/)
        .first()
        .getByRole('button', { name: 'Reply' })
        .count(),
    ).toBe(1);
    const saved = `.phasebridge/runs/${lookId}/inputs/mockup.png`;
    expect(fs.readFileSync(`${ws}/${saved}`).equals(png)).toBe(true);
    const after = await e2e.bridge.orchestrator.getRun(lookId);
    expect(after.feedback?.map((f) => f.text)).toEqual([
      `match this mockup\n\nFiles with this guidance: ${saved}`,
    ]);
    expect(pageProblems).toEqual([]);
  });

  it('fits 1280 and 375 px without sideways scrolling and passes an axe scan', async () => {
    const pages = {
      console: '/',
      runs: '/runs',
      runsFiltered: '/runs?status=awaiting&age=24h&idle=15m',
      run: `/runs/${runId}`,
      log: `/runs/${runId}/logs/plan?attempt=1`,
      access: '/admin/access',
      audit: '/admin/audit',
    };
    const shots: string[] = [];
    for (const width of [1280, 375]) {
      await page.setViewportSize({ width, height: width === 375 ? 812 : 800 });
      for (const [name, url] of Object.entries(pages)) {
        await page.goto(url);
        const w = await widths(page);
        expect(w.scrollWidth, `${name} at ${width} px`).toBeLessThanOrEqual(w.viewport);
        expect(await axeProblems(page), `${name} at ${width} px`).toEqual([]);
        if (['console', 'runs', 'run'].includes(name))
          shots.push(await screenshot(page, `${name}-${width}`));
      }
    }
    // At phone width the runs table is a list: its header row is out of view, cells are labelled.
    await page.goto('/runs');
    // One evaluation: the runs list re-renders live, so two calls may see two different theads.
    const right = await page
      .locator('#runs thead')
      .evaluate((el) => el.getBoundingClientRect().right); // positioned off-screen
    expect(right).toBeLessThanOrEqual(0);
    process.stdout.write(`screenshots: ${shots.join(', ')}\n`);
    expect(pageProblems).toEqual([]);
  });

  it('answers 401 to requests without the session, and the login link works only once', async () => {
    const { url, loginUrl } = e2e.bridge;
    for (const p of [
      '/',
      '/runs',
      `/runs/${runId}`,
      '/events',
      '/metrics',
      '/admin/access',
      '/admin/audit.csv',
    ]) {
      expect((await fetch(`${url}${p}`)).status, p).toBe(401);
    }
    const before = (await e2e.bridge.orchestrator.listRuns()).length;
    for (const [p, body] of [
      ['/api/command', { text: 'run demo sneaky', key: 'k1k1k1k1' }],
      ['/api/run-action', { run: runId, action: 'approve' }],
      ['/api/access', { op: 'allow', user: 'telegram:666', role: 'admin' }],
    ] as const) {
      const post = await fetch(`${url}${p}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', origin: url },
        body: JSON.stringify(body),
      });
      expect(post.status, p).toBe(401);
    }
    expect((await e2e.bridge.orchestrator.listRuns()).length).toBe(before);
    expect((await e2e.bridge.repos.allowlist.list()).some((r) => r.userId === '666')).toBe(false);

    // With the session but from another origin, or without the CSRF token: 403, nothing done.
    const cookie = (await context.cookies(url)).map((c) => `${c.name}=${c.value}`).join('; ');
    const foreign = await fetch(`${url}/api/access`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ op: 'allow', user: 'telegram:666', role: 'admin' }),
    });
    expect(foreign.status).toBe(403);
    expect((await e2e.bridge.repos.allowlist.list()).some((r) => r.userId === '666')).toBe(false);

    const stranger = await browser.newContext();
    try {
      const p = await stranger.newPage();
      expect((await p.goto(loginUrl))?.status()).toBe(200);
      const [res] = await Promise.all([
        p.waitForResponse((r) => new URL(r.url()).pathname === '/login'),
        p.getByRole('button', { name: 'Sign in' }).click(),
      ]);
      expect(res.status()).toBe(401);
    } finally {
      await stranger.close();
    }
  });
});
