/** The runs list's URL: filters read and checked, bad values answered, pages linked by key. */
import { describe, expect, it } from 'vitest';
import {
  durationMs,
  listParams,
  listQuery,
  runsListResults,
} from '../../../../src/bridges/web/pages/runs-list.ts';

const url = (q: string) => new URL(`http://127.0.0.1/runs${q}`);
const run = (i: number) => ({
  id: `run-${i}`,
  workflowId: 'demo',
  workspace: '/srv/app',
  status: 'completed',
  startedBy: 'telegram:1',
  createdAt: 1000 + i,
  updatedAt: 2000 + i,
  finishedAt: null,
});

describe('runs list parameters', () => {
  it('reads every filter into the index query, age and idle from now', () => {
    const parsed = listParams(
      url(
        '?status=awaiting&workflow=demo&chat=telegram%3A-5&waiting=telegram%3A1&age=2h&idle=30m&q=login',
      ),
    );
    if ('error' in parsed) throw new Error(parsed.error);
    const q = listQuery(parsed.params, 10_000_000);
    expect(q).toMatchObject({
      status: 'awaiting',
      workflowId: 'demo',
      originChat: 'telegram:-5',
      waitingFor: 'telegram:1',
      updatedSince: 10_000_000 - 2 * 3_600_000,
      updatedBefore: 10_000_000 - 30 * 60_000,
      text: 'login',
      limit: 50,
    });
  });

  it('answers a bad status, duration or page link, saying what to write instead', () => {
    expect(listParams(url('?status=stuck'))).toEqual({
      error:
        'Unknown status "stuck": use one of active, awaiting, blocked, completed, failed, cancelled.',
    });
    expect(listParams(url('?age=yesterday'))).toMatchObject({
      error: expect.stringContaining('e.g. 30m, 24h, 7d'),
    });
    expect(listParams(url('?idle=0h'))).toHaveProperty('error');
    expect(listParams(url('?before=12;drop'))).toMatchObject({
      error: expect.stringContaining('start again from /runs'),
    });
    expect(listParams(url('?before=1.a&after=2.b'))).toHaveProperty('error');
    expect(durationMs('7d')).toBe(7 * 86_400_000);
    expect(durationMs('10000d')).toBeUndefined();
  });

  it('links Older and Newer by the edge runs, keeping the filters', () => {
    const items = [run(3), run(2), run(1)];
    const html = runsListResults(
      { items, total: 1000, totalCapped: true, hasNewer: true, hasOlder: true },
      { status: 'completed', before: '2004.run-4' },
    );
    expect(html).toContain('Showing 3 of 1,000+ matching runs');
    expect(html).toContain('href="/runs?status=completed&amp;before=2001.run-1" rel="next"');
    expect(html).toContain('href="/runs?status=completed&amp;after=2003.run-3" rel="prev"');
    expect(html).toContain('href="/runs?status=completed">Newest');
    const first = runsListResults({ items, total: 3, hasNewer: false, hasOlder: false }, {});
    expect(first).toContain('Showing 3 of 3 runs');
    expect(first).not.toContain('class="pager"');
    const searched = runsListResults(
      { items, total: 3, totalCapped: true, hasNewer: false, hasOlder: true },
      { q: 'run' },
    );
    expect(searched).toContain('Showing 3 matching runs; more on other pages');
  });
});
