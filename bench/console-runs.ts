/**
 * Benchmark: the web console's runs list, filtered, with 50 finished runs behind the live ones
 * and with 50,000 (issue 34: a page's cost must follow the active work, not the history). Each
 * size gets the same live runs (awaiting, active, blocked); the finished ones are written in one
 * transaction with the columns RunsRepo.upsert writes. Each case fetches the list over HTTP with
 * a console session (query + render + transfer, what a browser waits for), including a page 20
 * "Older" links deep (keyset: no OFFSET). Times are wall-clock milliseconds, p50 and p95 of the
 * repetitions; `ratio_p50` is the 50,000-run p50 over the 50-run p50. Prints one JSON object.
 *
 * Run: npx tsx bench/console-runs.ts [--finished 50000] [--small 50] [--live 40] [--reps 30]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebChannel } from '../src/bridges/web/channel.ts';
import { orchestratorRunsSource } from '../src/bridges/web/runs-source.ts';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import { NotFoundError } from '../src/errors.ts';
import { HttpServer } from '../src/http/server.ts';
import { createLogger } from '../src/log.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const FINISHED = arg('--finished', 50_000);
const SMALL = arg('--small', 50);
const LIVE = arg('--live', 40);
const REPS = arg('--reps', 30);
const WORDS = ['login', 'billing', 'search', 'export', 'cache', 'upload', 'audit', 'theme'];
const WORKFLOWS = ['demo', 'pabcd', 'release', 'hotfix', 'docs'];
const NOW = Date.now();

/** The list URLs timed at each size (the deep page is found by following Older links). */
const CASES: Record<string, string> = {
  first_page: '/runs',
  awaiting: '/runs?status=awaiting',
  person_waiting: '/runs?waiting=telegram%3A1001',
  chat_and_workflow: '/runs?chat=telegram%3A-1003&workflow=pabcd',
  updated_last_hour: '/runs?age=1h',
  idle_over_15m_blocked: '/runs?status=blocked&idle=15m',
  completed: '/runs?status=completed',
  search_live_spec: '/runs?status=active&q=billing',
  search_id: '/runs?q=add-login-7',
};

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { p50_ms: +at(0.5).toFixed(2), p95_ms: +at(0.95).toFixed(2) };
};

async function measure(finished: number): Promise<Record<string, unknown>> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-console-'));
  const db = openBridgeDb({ file: path.join(dir, 'bridge.db') });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const insert = db.sqlite.prepare(
    `insert into runs (id, workflow_id, workspace, layout, status, started_by, origin_chat,
       created_at, updated_at, finished_at, spec) values (?, ?, ?, 'native', ?, ?, ?, ?, ?, ?, ?)`,
  );
  const t0 = performance.now();
  db.sqlite.transaction(() => {
    // Finished history: one run a minute, ending a day ago.
    const oldest = NOW - 86_400_000 - finished * 60_000;
    for (let i = 0; i < finished; i++) {
      const at = oldest + i * 60_000;
      const word = WORDS[i % WORDS.length]!;
      const status = ['completed', 'completed', 'failed', 'cancelled'][i % 4]!;
      insert.run(
        `h${i}-add-${word}-${i}`,
        WORKFLOWS[i % 5]!,
        `/srv/projects/app-${i % 10}`,
        status,
        `telegram:${1000 + (i % 20)}`,
        `telegram:-100${i % 7}`,
        at,
        at + 30_000,
        at + 30_000,
        `Add ${word} to service ${i % 37}: ${'details '.repeat(20)}`,
      );
    }
  })();
  // The live work: the same at both sizes, updated within the last half hour.
  for (let i = 0; i < LIVE; i++) {
    const at = NOW - (i + 1) * 45_000;
    await repos.runs.upsert({
      id: `live-${i}-add-${WORDS[i % WORDS.length]}`,
      workflowId: WORKFLOWS[i % 5]!,
      workspace: `/srv/projects/app-${i % 10}`,
      layout: 'native',
      status: (['awaiting', 'active', 'blocked'] as const)[i % 3]!,
      startedBy: `telegram:${1000 + (i % 20)}`,
      originChat: `telegram:-100${i % 7}`,
      createdAt: at - 60_000,
      updatedAt: at,
      spec: `Add ${WORDS[i % WORDS.length]} to service ${i % 37}`,
    });
  }
  const fillMs = performance.now() - t0;
  const source = orchestratorRunsSource(
    {
      listRuns: async () => [],
      getRun: async (id) => {
        throw new NotFoundError(`no run ${id}`);
      },
      logPath: async () => '',
    },
    repos.runs,
  );
  const log = createLogger({ level: 'silent' });
  const web = new WebChannel({ logger: log, runs: source });
  const server = await HttpServer.start({ host: '127.0.0.1', port: 0, log, routes: [web.route] });
  await web.start(async () => {});
  const loginRes = await fetch(new URL('login', server.url), {
    method: 'POST',
    redirect: 'manual',
    body: new URLSearchParams({
      token: new URL(await web.loginUrl(server.url)).searchParams.get('token')!,
    }),
  });
  const cookie = (loginRes.headers.get('set-cookie') ?? '').split(';')[0]!;
  const get = async (url: string) => {
    const res = await fetch(`${server.url}${url}`, { headers: { cookie, accept: 'text/html' } });
    const html = await res.text();
    if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
    return html;
  };
  // Follow "Older" 20 times from the completed runs' first page: a deep page by key.
  let deep = '/runs?status=completed';
  for (let i = 0; i < 20; i++) {
    const older = /href="([^"]+)" rel="next"/.exec(await get(deep))?.[1];
    if (!older) break;
    deep = older.replaceAll('&amp;', '&');
  }
  const out: Record<string, unknown> = { finished, live: LIVE, fill_ms: Math.round(fillMs) };
  for (const [name, url] of Object.entries({ ...CASES, completed_page_21: deep })) {
    const times: number[] = [];
    let shows = '';
    for (let r = 0; r < REPS + 3; r++) {
      const t = performance.now();
      const html = await get(url);
      if (r >= 3) times.push(performance.now() - t); // the first few warm caches and the JIT
      shows = /id="runs-count"[^>]*>([^<]*)</.exec(html)?.[1] ?? '';
    }
    out[name] = { ...stats(times), shows };
  }
  await web.stop();
  await server.close();
  await db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

await measure(SMALL); // a warm-up pass: the JIT and the HTTP stack, not counted
const small = await measure(SMALL);
const large = await measure(FINISHED);
const ratio: Record<string, number> = {};
for (const k of [...Object.keys(CASES), 'completed_page_21']) {
  const a = small[k] as { p50_ms: number };
  const b = large[k] as { p50_ms: number };
  ratio[k] = +(b.p50_ms / a.p50_ms).toFixed(2);
}
console.log(
  JSON.stringify(
    {
      repetitions: REPS,
      page_size: 50,
      small_history: small,
      large_history: large,
      ratio_p50: ratio,
    },
    null,
    2,
  ),
);
