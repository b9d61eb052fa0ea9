/**
 * The leader-and-standby stories' shared setting (issue 33): a fresh Postgres database with a
 * Telegram team chat bound to a workspace folder and Alice allowed to approve there, the fake
 * Telegram, and how to start `phasebridge serve` processes on them and wait for what the chat
 * shows. Used by the serve-failover, serve-network-cut and serve-postgres-cut stories.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { migrateToLatest } from '../../src/db/connection.ts';
import { openPostgresDb } from '../../src/db/dialects/postgres/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import type { TcpProxy } from '../fakes/tcp-proxy.ts';
import { type FakeChat, FakeTelegram, type FakeUser } from '../fakes/telegram.ts';
import { type ServeProcess, spawnServe, waitForRole } from './ha-serve.ts';
import type { PostgresHandle } from './postgres.ts';
import type { RedisHandle } from './redis.ts';
import { slow, waitUntil } from './slowdown.ts';

/** The team chat of the stories. */
export const TEAM: FakeChat = { id: -2201, type: 'supergroup', title: 'Team' };
/** The approver of the stories. */
export const ALICE: FakeUser = { id: 621, first_name: 'Alice', username: 'alice' };
/** The bearer token every serve of the stories takes for /metrics. */
export const METRICS_TOKEN = 'scrape-token-failover';

/** One ledger line of a run, as the assertions read it. */
export interface LedgerLine {
  key: string;
  events: { type: string; stepId?: string; attempt?: number }[];
}

/** The ledger lines of the one run in `ws` (the stories start exactly one). */
export function ledgerLinesOf(ws: string): LedgerLine[] {
  const runsDir = path.join(ws, '.phasebridge', 'runs');
  const runs = fs.readdirSync(runsDir);
  expect(runs).toHaveLength(1);
  return fs
    .readFileSync(path.join(runsDir, runs[0]!, 'ledger.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as LedgerLine);
}

/** Applied once: one run in `ws`, its plan checkpoint resolved once, every ledger key once. */
export function expectAppliedOnce(ws: string): void {
  const lines = ledgerLinesOf(ws);
  expect(new Set(lines.map((l) => l.key)).size).toBe(lines.length);
  const resolved = lines.flatMap((l) => l.events).filter((e) => e.type === 'checkpointResolved');
  expect(resolved).toHaveLength(1);
}

/** The run's `stepId` queued once and completed once, at attempt 1; no step interrupted. */
export function expectStepRunOnce(ws: string, stepId: string): void {
  const events = ledgerLinesOf(ws).flatMap((l) => l.events);
  expect(events.filter((e) => e.type === 'stepInterrupted')).toEqual([]);
  const step = events.filter((e) => e.stepId === stepId);
  expect(step.filter((e) => e.type === 'stepQueued')).toHaveLength(1);
  expect(step.filter((e) => e.type === 'stepCompleted')).toEqual([
    expect.objectContaining({ attempt: 1 }),
  ]);
}

/** Waits until standby `s` says on /readyz that it prepared the takeover (bridge.db, the queue, the modules). */
export function takeoverPrepared(s: ServeProcess): Promise<true> {
  return waitUntil(
    async () => {
      const ready = (await (await fetch(`${s.url}/readyz`)).json()) as {
        checks: { name: string; detail?: string }[];
      };
      const detail = ready.checks.find((c) => c.name === 'takeover')?.detail;
      return detail?.startsWith('prepared:') === true ? true : undefined;
    },
    { timeoutMs: 60_000, message: `the standby did not prepare:\n${s.output()}` },
  );
}

/** `/metrics` of a serve, with the stories' token. */
export async function metricsOf(s: ServeProcess): Promise<string> {
  const res = await fetch(`${s.url}/metrics`, {
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  });
  return res.text();
}

/** What a story needs from its test file: the servers, and where to register cleanups. */
export interface HaClusterDeps {
  readonly pg: PostgresHandle;
  readonly redis: RedisHandle;
  readonly cleanups: (() => Promise<void> | void)[];
}

/** A fresh database, workspace and fake Telegram, and how to start `serve` on them. */
export async function haCluster(deps: HaClusterDeps) {
  const { cleanups } = deps;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-failover-'));
  cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  const url = await deps.pg.createDatabase();
  const fake = await FakeTelegram.start();
  cleanups.push(() => fake.close());
  fake.addChat(TEAM);

  // The chat is bound and Alice may run and approve, in the shared database.
  const setup = await openPostgresDb({ url, maxConnections: 1 });
  try {
    await migrateToLatest(setup);
    const repos = createRepositories(setup);
    const binding = await repos.bindings.bind({ chatRef: `telegram:${TEAM.id}`, workspace: ws });
    await repos.allowlist.allow(
      { bindingId: binding.id },
      'telegram',
      String(ALICE.id),
      'approver',
    );
  } finally {
    await setup.close();
  }

  /**
   * Starts `serve` named `name`; `env` overrides the shared environment (a proxied REDIS_URL),
   * `args` follow `serve` (`--concurrency 0`).
   */
  const start = async (
    name: string,
    env: Readonly<Record<string, string>> = {},
    args: readonly string[] = [],
  ): Promise<ServeProcess> => {
    const serve = await spawnServe({
      name,
      dir,
      args,
      env: {
        PHASEBRIDGE_WORKSPACE: ws,
        PHASEBRIDGE_METRICS_TOKEN: METRICS_TOKEN,
        LOG_LEVEL: 'warn',
        DEMO_AGENT_BEHAVIOUR: 'sleep=20',
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.apiRoot,
        DATABASE_URL: url,
        REDIS_URL: deps.redis.url,
        ...env,
      },
    });
    cleanups.push(() => serve.stop());
    return serve;
  };
  const roleIs = waitForRole;
  /**
   * `a` leading and `b` its standby; `aEnv` overrides `a`'s environment, `args` follow both
   * `serve`.
   */
  const leaderAndStandby = async (
    aEnv: Readonly<Record<string, string>> = {},
    args: readonly string[] = [],
  ) => {
    const a = await start('a', aEnv, args);
    await roleIs(a, 'leader');
    const b = await start('b', {}, args);
    await roleIs(b, 'standby');
    return { a, b };
  };
  /** Waits for the plan checkpoint with its buttons; the failure shows `s`'s log. */
  const reachesPlan = (s: ServeProcess) =>
    waitUntil(
      () =>
        fake
          .botMessages(TEAM.id)
          .find(
            (m) =>
              /Checkpoint plan/.test(m.text ?? '') &&
              JSON.stringify(m.replyMarkup ?? {}).includes('Approve'),
          ),
      { timeoutMs: 60_000, message: `no plan checkpoint in the chat:\n${s.output()}` },
    );
  /** Waits for the review checkpoint; the failure names the calls, answers and `b`'s log. */
  const reachesReview = (b: ServeProcess) =>
    waitUntil(() => fake.botMessages(TEAM.id).some((m) => /Checkpoint review/.test(m.text ?? '')), {
      timeoutMs: 90_000,
      message: `the run did not reach review:\n${JSON.stringify(fake.calls.slice(-30))}\n${JSON.stringify([...fake.callbackAnswers.values()])}\n${fake
        .botMessages(TEAM.id)
        .map((m) => m.text)
        .join('\n---\n')}\n${b.output()}`,
    });
  /** Alice presses `label` under message `messageId`; returns the press's callback id. */
  const press = (messageId: number, label: string): string => {
    const update = fake.userPresses({ chatId: TEAM.id, messageId, from: ALICE, label });
    return (update as { callback_query?: { id: string } }).callback_query!.id;
  };
  /**
   * The cut stories: a run reaches its plan checkpoint on `a`; `proxy` (between `a` and a server)
   * then drops every packet and Alice presses Approve at once. Waits until `b` leads, the press is
   * answered, the run is at review and `a` exited (expected 75); returns the times after the cut.
   */
  const cutAtPlanAndApprove = async (a: ServeProcess, b: ServeProcess, proxy: TcpProxy) => {
    fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
    const plan = await reachesPlan(a);
    proxy.cut('blackhole');
    const cutAt = Date.now();
    const exitedAt = a.exited.then(() => Date.now());
    const pressId = press(plan.message_id, 'Approve');
    await roleIs(b, 'leader');
    const takeoverMs = Date.now() - cutAt;
    await waitUntil(() => fake.callbackAnswers.has(pressId), {
      timeoutMs: 60_000,
      message: `the press was never answered:\n${a.output()}\n---\n${b.output()}`,
    });
    await reachesReview(b);
    const reviewMs = Date.now() - cutAt;
    const code = await Promise.race([
      a.exited,
      new Promise<'running'>((r) => setTimeout(() => r('running'), slow(60_000))),
    ]);
    expect(code, a.output()).toBe(75);
    const exitMs = (await exitedAt) - cutAt;
    const load = os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ');
    return {
      summary: `the standby led ${takeoverMs} ms after the cut, the run was at review after ${reviewMs} ms, the old leader exited 75 after ${exitMs} ms (load ${load})`,
    };
  };
  return {
    dir,
    ws,
    url,
    fake,
    start,
    roleIs,
    leaderAndStandby,
    reachesPlan,
    reachesReview,
    press,
    cutAtPlanAndApprove,
  };
}
