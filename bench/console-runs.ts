/**
 * Benchmark: the web console's runs list with 10,000 runs in bridge.db. The runs are indexed
 * through RunsRepo.upsert (what the orchestrator writes), then the list page is fetched over
 * HTTP with a console session (query + render + transfer, what a browser waits for) for the
 * first page, a deep page, each filter and both searches, and the index query alone is timed
 * too. Times are wall-clock milliseconds (median and p95 of the repetitions). The list reads
 * only the index (no ledger is opened: the runs' workspaces do not even exist).
 * Prints one JSON object.
 *
 * Run: npx tsx bench/console-runs.ts [--runs 10000] [--reps 30]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { WebChannel } from '../src/bridges/web/channel.ts';
import { orchestratorRunsSource } from '../src/bridges/web/runs-source.ts';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import type { RunIndexStatus } from '../src/db/schema.ts';
import { NotFoundError } from '../src/errors.ts';
import { HttpServer } from '../src/http/server.ts';
import { createLogger } from '../src/log.ts';

const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};
const RUNS = arg('--runs', 10_000);
const REPS = arg('--reps', 30);
const STATUSES: RunIndexStatus[] = [
  'completed',
  'completed',
  'completed',
  'failed',
  'cancelled',
  'awaiting',
  'active',
  'blocked',
];
const WORDS = ['login', 'billing', 'search', 'export', 'cache', 'upload', 'audit', 'theme'];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-console-'));
const db = openBridgeDb({ file: path.join(dir, 'bridge.db') });
await migrateToLatest(db);
const repos = createRepositories(db);

const t0 = performance.now();
const start = Date.parse('2026-01-01T00:00:00Z');
for (let i = 0; i < RUNS; i++) {
  const at = start + i * 60_000;
  const word = WORDS[i % WORDS.length]!;
  const stamp = new Date(at)
    .toISOString()
    .replace(/[-:]|\.\d+/g, '')
    .slice(0, 15);
  const id = `${new Date(at).toISOString().slice(0, 10)}T${stamp.slice(9)}Z-add-${word}-${i}`;
  await repos.runs.upsert({
    id,
    workflowId: ['demo', 'pabcd', 'release', 'hotfix', 'docs'][i % 5]!,
    workspace: `/srv/projects/app-${i % 10}`,
    layout: 'native',
    status: STATUSES[i % STATUSES.length]!,
    startedBy: `telegram:${1000 + (i % 20)}`,
    createdAt: at,
    updatedAt: at + 30_000,
    spec: `Add ${word} to service ${i % 37}: ${'details '.repeat(20)}`,
  });
}
const indexMs = performance.now() - t0;

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
  // The link's GET only shows a confirm page; its form posts the token.
  body: new URLSearchParams({
    token: new URL(await web.loginUrl(server.url)).searchParams.get('token')!,
  }),
});
const cookie = (loginRes.headers.get('set-cookie') ?? '').split(';')[0]!;

const CASES: Record<string, string> = {
  first_page: '/runs',
  page_100: '/runs?page=100',
  last_page: `/runs?page=${Math.ceil(RUNS / 50)}`,
  status_failed: '/runs?status=failed',
  workflow_and_starter: '/runs?workflow=pabcd&by=telegram%3A1001',
  workspace: '/runs?workspace=%2Fsrv%2Fprojects%2Fapp-3',
  search_id: `/runs?q=${encodeURIComponent(`-${Math.floor(RUNS / 2)}`)}`,
  search_spec: '/runs?q=service%2017%3A',
};

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return {
    median_ms: +at(0.5).toFixed(2),
    p95_ms: +at(0.95).toFixed(2),
    max_ms: +s.at(-1)!.toFixed(2),
  };
};

const http: Record<string, unknown> = {};
for (const [name, url] of Object.entries(CASES)) {
  const times: number[] = [];
  let bytes = 0;
  let matched = '';
  for (let r = 0; r < REPS + 3; r++) {
    const t = performance.now();
    const res = await fetch(`${server.url}${url}`, { headers: { cookie, accept: 'text/html' } });
    const html = await res.text();
    const took = performance.now() - t;
    if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
    if (r >= 3) times.push(took); // the first few warm up caches and the JIT
    bytes = html.length;
    matched = /id="runs-count"[^>]*>([^<]*)</.exec(html)?.[1] ?? '';
  }
  http[name] = { url, ...stats(times), page_bytes: bytes, shows: matched };
}

const query: Record<string, unknown> = {};
for (const [name, q] of Object.entries({
  first_page: { limit: 50 },
  page_100: { limit: 50, offset: 99 * 50 },
  search_spec: { limit: 50, text: 'service 17:' },
})) {
  const times: number[] = [];
  for (let r = 0; r < REPS + 3; r++) {
    const t = performance.now();
    await repos.runs.search(q);
    if (r >= 3) times.push(performance.now() - t);
  }
  query[name] = stats(times);
}

await web.stop();
await server.close();
await db.close();
fs.rmSync(dir, { recursive: true, force: true });
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      repetitions: REPS,
      index_fill_ms: Math.round(indexMs),
      http_list_page: http,
      index_query: query,
    },
    null,
    2,
  ),
);
