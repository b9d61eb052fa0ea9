/**
 * The web console in a real browser (headless chromium through playwright-core) against the real
 * bridge, as an operator uses it: log in with the printed link, start the demo run by typing,
 * follow the links from the chat to the run page, approve there, request changes with a reason,
 * approve again, everything arriving live over SSE; open a step's log and its diff (the
 * workspace is a git repository and the demo agent writes a file); take a `status` snapshot;
 * attach a photo to `run` and a file to a reply on its checkpoint;
 * filter and search the runs list; give a role on the Access page; filter and export the audit
 * log (console-admin-story.ts). Every page is checked at 1280 and 375 px for sideways scrolling,
 * screenshotted to test-artifacts/, and scanned with axe-core (no serious or critical violation;
 * console-guard-story.ts). One story on one page: the steps in those files run in this file's
 * describe, on its chromium and bridge, in the order they are registered here.
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
import { adminPageSteps } from './console-admin-story.ts';
import { pageGuardSteps } from './console-guard-story.ts';
import { type ConsoleStory, chatMessage, visible } from './console-story.ts';

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

/** The story's state as the steps in other files read it (console-story.ts), when they run. */
const story: ConsoleStory = {
  get e2e() {
    return e2e;
  },
  get browser() {
    return browser;
  },
  get context() {
    return context;
  },
  get page() {
    return page;
  },
  pageProblems,
  get runId() {
    return runId;
  },
  get run() {
    return run;
  },
};

/** A message of the console chat containing `text` (optionally one with a given button). */
function message(text: string | RegExp, button?: string): Locator {
  return chatMessage(page, text, button);
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

  // The runs list, Access and Audit pages (console-admin-story.ts).
  adminPageSteps(story);

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

  // Every page's layout and axe scan, and the refusals without a session (console-guard-story.ts).
  pageGuardSteps(story);
});
