/** /healthz and /readyz over real HTTP with real probes. */
import { afterEach, describe, expect, it } from 'vitest';
import { PlatformError } from '../../src/errors.ts';
import { healthRoutes, Readiness } from '../../src/http/health.ts';
import { HttpServer } from '../../src/http/server.ts';
import { memoryLog } from '../bridges/web/support.ts';

let server: HttpServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(readiness: Readiness, role?: () => string): Promise<string> {
  server = await HttpServer.start({
    host: '127.0.0.1',
    port: 0,
    log: memoryLog(),
    routes: healthRoutes(readiness, role),
  });
  return server.url;
}

describe('health', () => {
  it('/readyz says the role of a bridge with a leader lease; ?role=leader is 503 on a standby', async () => {
    let role = 'standby';
    const base = await serve(new Readiness(memoryLog()), () => role);
    const standby = await fetch(`${base}/readyz`);
    expect(standby.status).toBe(200);
    expect(await standby.json()).toMatchObject({ status: 'ready', role: 'standby' });
    // A load balancer checking ?role=leader sends webhooks and the console to the leader only.
    expect((await fetch(`${base}/readyz?role=leader`)).status).toBe(503);
    role = 'leader';
    const leader = await fetch(`${base}/readyz?role=leader`);
    expect(leader.status).toBe(200);
    expect(await leader.json()).toMatchObject({ role: 'leader' });
  });

  it('/readyz of a lone bridge names no role', async () => {
    const base = await serve(new Readiness(memoryLog()));
    expect(await (await fetch(`${base}/readyz`)).json()).toEqual({ status: 'ready', checks: [] });
  });

  it('/healthz answers 200 without a session', async () => {
    const base = await serve(new Readiness(memoryLog()));
    const res = await fetch(`${base}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/healthz`, { method: 'POST' })).status).toBe(405);
  });

  it('/readyz is 200 when every probe passes and 503 naming the one that fails', async () => {
    const log = memoryLog();
    const readiness = new Readiness(log);
    let telegramUp = true;
    readiness.add('bridge.db', async () => true);
    readiness.add('queue', async () => {});
    readiness.add('telegram', async () => {
      if (!telegramUp) throw new PlatformError('telegram', 'getMe failed (401: Unauthorized)');
    });
    const base = await serve(readiness);
    const ok = await fetch(`${base}/readyz`);
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ status: 'ready' });

    telegramUp = false;
    const down = await fetch(`${base}/readyz`);
    expect(down.status).toBe(503);
    const body = (await down.json()) as { checks: { name: string; ok: boolean }[] };
    expect(body.checks).toEqual([
      { name: 'bridge.db', ok: true },
      { name: 'queue', ok: true },
      { name: 'telegram', ok: false, error: 'PLATFORM' },
    ]);
    // The details are in the log, not in the public answer.
    expect(JSON.stringify(body)).not.toContain('Unauthorized');
    const logged = log.lines.find((l) => l.msg === 'readiness probe failed')?.obj as { err: Error };
    expect(logged.err.message).toContain('Unauthorized');
  });

  it('a probe that answers false or never answers makes /readyz 503', async () => {
    const readiness = new Readiness(memoryLog(), 50);
    readiness.add('redis', () => new Promise(() => {}));
    readiness.add('discord', async () => false);
    const base = await serve(readiness);
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { checks: unknown }).checks).toEqual([
      { name: 'redis', ok: false, error: 'timeout' },
      { name: 'discord', ok: false, error: 'not ready' },
    ]);
  });

  it('logs a probe that keeps failing the same way once at warn, the repeats at debug', async () => {
    const log = memoryLog();
    const readiness = new Readiness(log, 1000);
    let up = false;
    readiness.add('telegram', async () => up || { ready: false, detail: 'telegram is starting' });
    const base = await serve(readiness);
    for (let i = 0; i < 3; i++) expect((await fetch(`${base}/readyz`)).status).toBe(503);
    const failed = (level: string) =>
      log.lines.filter((l) => l.level === level && l.msg === 'readiness probe failed').length;
    expect([failed('warn'), failed('debug')]).toEqual([1, 2]);
    up = true;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    up = false;
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
    expect(failed('warn')).toBe(2);
  });

  it('probe names are unique and can be removed', async () => {
    const readiness = new Readiness(memoryLog());
    readiness.add('slack', async () => false);
    expect(() => readiness.add('slack', async () => true)).toThrow(/exists/);
    readiness.remove('slack');
    expect(await readiness.check()).toEqual({ ready: true, checks: [] });
  });
});
