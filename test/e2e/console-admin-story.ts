/**
 * The console story's list and admin pages (console.browser.test.ts runs these steps on its
 * shared page, after the first run ended): the runs list's filters and search, a role given on
 * the Access page, the audit log filtered and exported.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import { type ConsoleStory, chatMessage, visible } from './console-story.ts';

/** Registers the steps, in order, on the story's describe. */
export function adminPageSteps(story: ConsoleStory): void {
  it('filters and searches the runs list; ids do not wrap at 1280 px', async () => {
    const { page, pageProblems, runId } = story;
    await page.goto('/');
    const box = page.getByRole('textbox', { name: 'Command' });
    await box.fill('run demo write the release notes');
    await box.press('Enter');
    await visible(chatMessage(page, 'Checkpoint plan:1', 'Approve').filter({ hasNotText: runId }));
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
    const { e2e, page, pageProblems } = story;
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
    const { e2e, context, page, pageProblems, runId } = story;
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
}
