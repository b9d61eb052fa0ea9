/**
 * The queue page over real HTTP and a real embedded queue (bridge.db's jobs table): counts and
 * lists, Remove of a waiting job audited under the actor, and bad input answered without a change.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { consoleQueue } from '../../../src/app/console-queue.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';
import { createSqliteQueue } from '../../../src/jobs/queue/sqlite-driver.ts';
import { openTestDb, type TestDb } from '../../db/helpers.ts';
import { type Browser, login, post, startConsole, type TestConsole } from './support.ts';

const RUN = '2026-12-02T100000Z-add-login';

describe('the queue page', () => {
  let t: TestDb;
  let queue: JobQueue;
  let c: TestConsole;
  let b: Browser;
  beforeEach(async () => {
    t = await openTestDb();
    queue = createSqliteQueue({ db: t.db });
    c = await startConsole({ channel: { queue: consoleQueue(queue, t.repos) } });
    b = await login(c);
    await queue.enqueue({ runId: RUN, stepId: 'plan', attempt: 1, payload: {} });
    await queue.enqueue(
      { runId: RUN, stepId: 'build', attempt: 1, payload: {} },
      { delayMs: 3_600_000 },
    );
  });
  afterEach(async () => {
    await c.dispose();
    await queue.close();
    await t.cleanup();
  });

  const html = async (path = '/queue') =>
    (await fetch(`${c.base}${path}`, { headers: { cookie: b.cookie } })).text();

  it('counts and lists the jobs, each linked to its run and its step log', async () => {
    const page = await html();
    expect(page).toContain('<b id="count-waiting">1</b>');
    expect(page).toContain('<b id="count-delayed">1</b>');
    expect(page).toContain(`href="/runs/${RUN}"`);
    expect(page).toContain(`href="/runs/${RUN}/logs/plan?attempt=1"`);
    const live = (await (
      await fetch(`${c.base}/queue?part=results`, { headers: { cookie: b.cookie } })
    ).json()) as { html: string };
    expect(live.html).toContain('id="jobs-delayed"');
  });

  it('removes a waiting job as the local admin, audited; a second removal is refused', async () => {
    const job = `${RUN}:build:1`;
    const res = await post(c, b, '/api/queue', { op: 'remove', job });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, text: `Removed job ${job}: it will not run.` });
    expect((await queue.jobCounts()).delayed).toBe(0);
    const again = await post(c, b, '/api/queue', { op: 'remove', job });
    expect(again.status).toBe(409);
    expect(await again.json()).toEqual({
      error: `Job ${job} was not removed: no job waits under that id.`,
    });
    const audit = await t.repos.audit.listRecent({ actor: 'web:admin' });
    expect(audit.map((e) => [e.action, e.outcome, e.target])).toEqual([
      ['queue:remove', 'refused', job],
      ['queue:remove', 'allowed', job],
    ]);
  });

  it('answers a malformed action 400 and changes nothing', async () => {
    for (const body of [
      { op: 'purge', job: `${RUN}:plan:1` },
      { op: 'remove', job: '../../etc' },
      { op: 'remove', job: `${RUN}:plan:x` },
    ]) {
      const res = await post(c, b, '/api/queue', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/\S/);
    }
    expect(await queue.jobCounts()).toMatchObject({ waiting: 1, delayed: 1 });
    expect(await t.repos.audit.listRecent({ actor: 'web:admin' })).toEqual([]);
  });
});
