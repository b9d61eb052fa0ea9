/** /metrics: prom-client exposition of the bridge's counters, behind the console session. */
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimitedError } from '../../src/errors.ts';
import { BridgeMetrics, bearerOr } from '../../src/http/metrics.ts';
import { login, memoryLog, startConsole, type TestConsole } from '../bridges/web/support.ts';

let c: TestConsole | undefined;
afterEach(async () => {
  await c?.dispose();
  c = undefined;
});

describe('metrics', () => {
  it('exposes platform calls, decisions, runs and jobs; only with a console session', async () => {
    const metrics = new BridgeMetrics({
      log: memoryLog(),
      runsByStatus: async () => ({ active: 2, completed: 5 }),
      jobsByState: async () => ({ waiting: 1, active: 1 }),
    });
    c = await startConsole({
      routes: (channel) => [{ prefix: '/metrics', handler: channel.protect(metrics.handler()) }],
    });
    metrics.platformCall('telegram', 'ok');
    metrics.platformCall('telegram', 'ok');
    metrics.platformCall('slack', 'rate_limited');
    await expect(
      metrics.timePlatformCall('discord', () =>
        Promise.reject(new RateLimitedError('discord', 1000)),
      ),
    ).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    metrics.checkpointDecided('approve', '2026-01-01T10:00:00Z', '2026-01-01T10:02:00Z');

    expect((await fetch(`${c.base}/metrics`)).status).toBe(401);
    const b = await login(c);
    const res = await fetch(`${c.base}/metrics`, { headers: { cookie: b.cookie } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain(
      'phasebridge_platform_api_calls_total{platform="telegram",outcome="ok"} 2',
    );
    expect(text).toContain(
      'phasebridge_platform_api_calls_total{platform="slack",outcome="rate_limited"} 1',
    );
    expect(text).toContain(
      'phasebridge_platform_api_calls_total{platform="discord",outcome="rate_limited"} 1',
    );
    expect(text).toContain(
      'phasebridge_checkpoint_decision_seconds_bucket{le="300",answer="approve"} 1',
    );
    expect(text).toContain('phasebridge_checkpoint_decision_seconds_sum{answer="approve"} 120');
    expect(text).toContain('phasebridge_runs{status="active"} 2');
    expect(text).toContain('phasebridge_jobs{state="waiting"} 1');
    expect(text).toContain('phasebridge_process_cpu_seconds_total');
  });

  it('a scraper reads /metrics with the bearer token; any other credential needs the session', async () => {
    const metrics = new BridgeMetrics({ log: memoryLog(), processMetrics: false });
    metrics.platformCall('telegram', 'ok');
    c = await startConsole({
      routes: (channel) => [
        {
          prefix: '/metrics',
          handler: bearerOr('scrape-token-7', (h) => channel.protect(h), metrics.handler()),
        },
      ],
    });
    const cases: [authorization: string | undefined, status: number][] = [
      ['Bearer scrape-token-7', 200],
      ['bearer scrape-token-7', 200],
      ['Bearer scrape-token-8', 401],
      ['Bearer scrape-token-7x', 401],
      ['Basic scrape-token-7', 401],
      [undefined, 401],
    ];
    for (const [authorization, status] of cases) {
      const headers: Record<string, string> = authorization ? { authorization } : {};
      const res = await fetch(`${c.base}/metrics`, { headers });
      expect({ authorization, status: res.status }).toEqual({ authorization, status });
      if (status === 200) expect(await res.text()).toContain('platform="telegram",outcome="ok"');
    }
    // The console session still works next to the token.
    const b = await login(c);
    expect((await fetch(`${c.base}/metrics`, { headers: { cookie: b.cookie } })).status).toBe(200);
  });

  it('a failing collector does not fail the scrape', async () => {
    const log = memoryLog();
    const metrics = new BridgeMetrics({
      log,
      processMetrics: false,
      runsByStatus: () => Promise.reject(new Error('database is locked')),
    });
    metrics.platformCall('web', 'error');
    const text = await metrics.text();
    expect(text).toContain(
      'phasebridge_platform_api_calls_total{platform="web",outcome="error"} 1',
    );
    expect(log.lines.some((l) => l.msg === 'metrics: collector failed')).toBe(true);
  });

  it('two bridges in one process keep separate registries', async () => {
    const a = new BridgeMetrics({ log: memoryLog(), processMetrics: false });
    const b = new BridgeMetrics({ log: memoryLog(), processMetrics: false });
    a.platformCall('telegram', 'ok');
    expect(await b.text()).not.toContain('platform="telegram"');
  });
});
