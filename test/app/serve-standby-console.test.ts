/**
 * A standby's console (issue 33), as a team member meets it: two real `phasebridge serve` on one
 * postgres and one redis-server. Through the standby's address a browser signs in with the
 * leader's login link, opens the console and its event stream, starts a run and sees the
 * leader's chat, while /readyz and /metrics stay the standby's own. The leader is SIGKILLed: the
 * stream through the standby is cut (not left hanging), the console says to retry (503 with
 * Retry-After) until the standby leads, then the same browser session works there and shows the
 * same chat. The old leader, started again, is a standby that forwards to the new leader.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { signIn } from '../support/console-login.ts';
import { roleOf, type ServeProcess, spawnServe, waitForRole } from '../support/ha-serve.ts';
import { describeHa } from '../support/ha-suite.ts';
import { slow, waitUntil } from '../support/slowdown.ts';

const METRICS_TOKEN = 'scrape-token-standby-console';

/** The run's status message as the console renders it. */
const STATUS = /<strong>Run \S+<\/strong> · Demo/;
const TYPED = '› run demo add a login page';

/** `/readyz`'s `leader` check detail of a standby. */
async function leaderDetail(s: ServeProcess): Promise<string> {
  try {
    const res = await fetch(`${s.url}/readyz`);
    const body = (await res.json()) as { checks: { name: string; detail?: string }[] };
    return body.checks.find((c) => c.name === 'leader')?.detail ?? '';
  } catch {
    return '';
  }
}

/** The console page at `base` as the browser with `cookie` sees it. */
async function page(base: string, cookie: string): Promise<{ status: number; html: string }> {
  const res = await fetch(`${base}/`, { headers: { cookie, accept: 'text/html' } });
  return { status: res.status, html: await res.text() };
}

/** Types `text` into the console at `base`, as the page's script posts it. */
async function say(base: string, cookie: string, csrf: string, text: string): Promise<number> {
  const res = await fetch(`${base}/api/command`, {
    method: 'POST',
    headers: {
      cookie,
      'x-csrf-token': csrf,
      // The browser's origin is the standby's address: the leader sees the same Host.
      origin: base,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({ text }),
  });
  return res.status;
}

describeHa('a standby forwards the console to the leader', 'standby console story', (suite) => {
  it(
    'signs in and works through the standby; after the leader is killed, the standby leads and the same session works',
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-standby-console-'));
      suite.cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
      const ws = path.join(dir, 'ws');
      fs.mkdirSync(ws);
      const url = await suite.pg.createDatabase();
      const start = async (name: string): Promise<ServeProcess> => {
        const serve = await spawnServe({
          name,
          dir,
          env: {
            PHASEBRIDGE_WORKSPACE: ws,
            PHASEBRIDGE_METRICS_TOKEN: METRICS_TOKEN,
            // The dead leader's lease outlives the kill by up to this: the 503 is seen in it.
            PHASEBRIDGE_LEADER_LEASE_MS: String(Math.min(60_000, slow(5_000))),
            LOG_LEVEL: 'warn',
            DEMO_AGENT_BEHAVIOUR: 'sleep=20',
            DATABASE_URL: url,
            REDIS_URL: suite.redis.url,
          },
        });
        suite.cleanups.push(() => serve.stop());
        return serve;
      };
      const roleIs = waitForRole;
      /** Waits until standby `s` sees a console address advertised by the leader. */
      const forwarding = (s: ServeProcess) =>
        waitUntil(async () => (await leaderDetail(s)).includes('console forwarded to it'), {
          timeoutMs: 30_000,
          message: `${s.name} never saw the leader's console address: ${s.output()}`,
        });

      const a = await start('a');
      await roleIs(a, 'leader');
      const b = await start('b');
      await roleIs(b, 'standby');
      await forwarding(b);

      // The leader's login link, opened at the standby's address.
      const link = await waitUntil(() => /Web console: (http:\/\/\S+)/.exec(a.output())?.[1], {
        message: `the leader printed no login link:\n${a.output()}`,
      });
      const signedIn = await signIn(`${b.url}/${new URL(link).search}`);
      expect(signedIn.status, await signedIn.clone().text()).toBe(303);
      const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
      expect(cookie).toMatch(/=/);

      const first = await page(b.url, cookie);
      expect(first.status).toBe(200);
      const csrf = /name="csrf-token" content="([^"]+)"/.exec(first.html)?.[1] ?? '';
      expect(csrf).not.toBe('');

      // The page's event stream, through the standby.
      const stream = await fetch(`${b.url}/events?tab=t1`, {
        headers: { cookie, accept: 'text/event-stream' },
      });
      expect(stream.status).toBe(200);
      expect(stream.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const reader = stream.body!.getReader();
      const decoder = new TextDecoder();
      let streamed = '';
      const streamOver = (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return 'ended';
            streamed += decoder.decode(value, { stream: true });
          }
        } catch {
          return 'cut';
        }
      })();

      expect(await say(b.url, cookie, csrf, 'run demo add a login page')).toBe(200);
      await waitUntil(() => streamed.includes(TYPED) && STATUS.test(streamed), {
        timeoutMs: 30_000,
        message: `the stream through the standby did not carry the run:\n${streamed}\n${a.output()}`,
      });
      // What the standby shows is the leader's chat.
      const atLeader = await page(a.url, cookie);
      expect(atLeader.html).toContain(TYPED);
      expect(atLeader.html).toMatch(STATUS);
      expect((await page(b.url, cookie)).html).toMatch(STATUS);
      // Its health and metrics stay its own.
      expect(await roleOf(b)).toBe('standby');
      const metrics = await fetch(`${b.url}/metrics`, {
        headers: { authorization: `Bearer ${METRICS_TOKEN}` },
      });
      expect(await metrics.text()).toContain('phasebridge_bridge_info{role="standby"');

      // The leader dies: the stream through the standby is cut, not left open.
      a.child.kill('SIGKILL');
      await a.exited;
      let timer: NodeJS.Timeout | undefined;
      const over = await Promise.race([
        streamOver,
        new Promise<'open'>((r) => {
          timer = setTimeout(() => r('open'), slow(15_000));
        }),
      ]);
      clearTimeout(timer);
      expect(over).not.toBe('open');
      // Until the standby leads, its console says to retry.
      const meanwhile = await fetch(`${b.url}/`, {
        headers: { cookie, accept: 'application/json' },
      });
      expect(meanwhile.status).toBe(503);
      expect(meanwhile.headers.get('retry-after')).toBe('2');
      expect(((await meanwhile.json()) as { error: string }).error).toMatch(
        /cannot be reached.*retry in a few seconds/,
      );

      // The standby takes over: the same session works there and shows the same chat.
      await roleIs(b, 'leader');
      const after = await page(b.url, cookie);
      expect(after.status).toBe(200);
      expect(after.html).toContain(TYPED);
      expect(after.html).toMatch(STATUS);
      expect(await say(b.url, cookie, csrf, 'runs')).toBe(200);

      // The old leader comes back as a standby: it forwards to the new leader, not to itself.
      const again = await start('a');
      await roleIs(again, 'standby');
      await forwarding(again);
      const through = await page(again.url, cookie);
      expect(through.status).toBe(200);
      expect(through.html).toContain('› runs');
    },
    slow(300_000),
  );
});
