/**
 * The console story's closing checks (console.browser.test.ts runs them last on its shared
 * page): every page at 1280 and 375 px without sideways scrolling and with no serious axe
 * violation, and 401/403 to requests without the session or from another origin.
 */
import { expect, it } from 'vitest';
import type { ConsoleStory } from './console-story.ts';
import { axeProblems, screenshot, widths } from './page-checks.ts';

/** Registers the checks, in order, on the story's describe. */
export function pageGuardSteps(story: ConsoleStory): void {
  it('fits 1280 and 375 px without sideways scrolling and passes an axe scan', async () => {
    const { page, pageProblems, runId } = story;
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
    const { e2e, browser, context, runId } = story;
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
}
