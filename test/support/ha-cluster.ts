/**
 * The leader-and-standby stories' shared setting (issue 33): a fresh Postgres database with a
 * Telegram team chat bound to a workspace folder and Alice allowed to approve there, the fake
 * Telegram, and how to start `phasebridge serve` processes on them and wait for what the chat
 * shows. Used by test/app/serve-failover.test.ts and test/app/serve-network-cut.test.ts.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'vitest';
import { migrateToLatest } from '../../src/db/connection.ts';
import { openPostgresDb } from '../../src/db/dialects/postgres/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import { type FakeChat, FakeTelegram, type FakeUser } from '../fakes/telegram.ts';
import { type ServeProcess, spawnServe, waitForRole } from './ha-serve.ts';
import type { PostgresHandle } from './postgres.ts';
import type { RedisHandle } from './redis.ts';
import { waitUntil } from './slowdown.ts';

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
  return { dir, ws, url, fake, start, roleIs, leaderAndStandby, reachesPlan, reachesReview, press };
}
