/**
 * Benchmark: where a takeover's time goes (issue 33). Two `phasebridge serve` (LOG_LEVEL=debug)
 * on one postgres and redis-server, the fake Telegram, one chat. Each round starts a run, waits
 * for its plan checkpoint, reads how long the leader's lease has left, SIGKILLs the leader and
 * presses Approve at once, then times, from the kill: the lease's expiry (what it had left), the
 * standby taking it, each step of the new leader's start (its `takeover` debug lines,
 * src/app/start-clock.ts), `/readyz` saying leader, the first getUpdates and the press answered.
 * The killed bridge comes back as the standby, the run is approved at review, and the next round
 * begins.
 *
 * Run: npx tsx bench/takeover.ts [--rounds 5]
 * Prints JSON: per round and the median of each phase.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { FakeChat, FakeUser } from '../test/fakes/telegram.ts';
import { roleOf, type ServeProcess, spawnServe } from '../test/support/ha-serve.ts';
import { until } from './failover-runs.ts';
import { startHaBenchWorld } from './ha-bench-world.ts';

const arg = (name: string, fallback: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ROUNDS = arg('rounds', 5);
const TEAM: FakeChat = { id: -3401, type: 'supergroup', title: 'Team' };
const ALICE: FakeUser = { id: 634, first_name: 'Alice', username: 'alice' };
const load = () => os.loadavg().map((l) => Math.round(l * 10) / 10);
const say = (line: string) =>
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

/** The JSON log lines of a serve written at or after `since` (epoch ms). */
function linesOf(
  s: ServeProcess,
  since: number,
): { time: number; msg?: string; [k: string]: unknown }[] {
  return s
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => {
      try {
        return JSON.parse(l) as { time: number; msg?: string };
      } catch {
        return { time: 0 };
      }
    })
    .filter((l) => l.time >= since);
}

const loadAtStart = load();
const { dir, ws, pg, redis, fake, url } = await startHaBenchWorld(
  'pb-takeover-bench-',
  TEAM,
  ALICE,
);
const client = new Redis(redis.url);

let generation = 0;
const start = (slot: string) =>
  spawnServe({
    name: `${slot}-${generation++}`,
    dir,
    env: {
      PHASEBRIDGE_WORKSPACE: ws,
      LOG_LEVEL: 'debug',
      DEMO_AGENT_BEHAVIOUR: 'sleep=20',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      DATABASE_URL: url,
      REDIS_URL: redis.url,
    },
  });
/** The newest checkpoint `name` with its buttons, sent after message `after`. */
const checkpoint = (after: number, name: string) =>
  fake
    .botMessages(TEAM.id)
    .find(
      (m) =>
        m.message_id > after &&
        (m.text ?? '').includes(`Checkpoint ${name}`) &&
        JSON.stringify(m.replyMarkup ?? {}).includes('Approve'),
    );
const lastMessageId = () => Math.max(0, ...fake.botMessages(TEAM.id).map((m) => m.message_id));
const press = (messageId: number) =>
  (
    fake.userPresses({ chatId: TEAM.id, messageId, from: ALICE, label: 'Approve' }) as {
      callback_query?: { id: string };
    }
  ).callback_query!.id;

type Round = Record<string, number | undefined>;
const rounds: Round[] = [];
let leader = await start('a');
if ((await until(async () => (await roleOf(leader)) === 'leader', 120_000)) === undefined)
  throw new Error(`no leader:\n${leader.output()}`);
let standby = await start('b');
try {
  for (let r = 0; r < ROUNDS; r++) {
    if ((await until(async () => (await roleOf(standby)) === 'standby', 120_000)) === undefined)
      throw new Error(`no standby:\n${standby.output()}`);
    const tag = `round-${r}`;
    const after = lastMessageId();
    fake.userSends({ chat: TEAM, from: ALICE, text: `/run demo ${tag}` });
    const plan = await until(() => checkpoint(after, 'plan'), 120_000);
    if (plan === undefined) throw new Error(`no plan checkpoint:\n${leader.output()}`);
    const leftMs = await client.pttl('phasebridge:leader');
    leader.child.kill('SIGKILL');
    const killedAt = Date.now();
    const pressId = press(plan.message_id);
    await leader.exited;
    const readyAt = await until(
      async () => ((await roleOf(standby)) === 'leader' ? Date.now() : undefined),
      120_000,
    );
    const answered = await until(
      () =>
        fake.calls.find(
          (c) =>
            c.method === 'answerCallbackQuery' &&
            (c.params as { callback_query_id?: string }).callback_query_id === pressId,
        ),
      120_000,
    );
    const lines = linesOf(standby, killedAt);
    const taken = lines.find((l) => l.msg === 'leader lease taken: starting the bridge');
    const round: Round = {
      leaseLeftAtKillMs: leftMs,
      leaseTakenMs: taken && taken.time - killedAt,
      takenAfterExpiryMs: taken && taken.time - killedAt - leftMs,
    };
    for (const l of lines.filter((x) => x.msg === 'takeover'))
      round[String(l.step)] = l.ms as number;
    round.readyzLeaderMs = readyAt && readyAt - killedAt;
    round.firstGetUpdatesMs =
      (fake.calls.find((c) => c.method === 'getUpdates' && (c.at ?? 0) > (taken?.time ?? Infinity))
        ?.at ?? NaN) - killedAt;
    round.pressAnsweredMs = answered && (answered.at ?? NaN) - killedAt;
    round.load1 = load()[0];
    rounds.push(round);
    say(`round ${r}: ${JSON.stringify(round)}`);
    const old = leader;
    leader = standby;
    standby = await start(old.name.split('-')[0]!);
    const review = await until(() => checkpoint(after, 'review'), 120_000);
    if (review !== undefined) press(review.message_id);
  }
  const median = (k: string) => {
    const v = rounds
      .map((r) => r[k])
      .filter((x): x is number => typeof x === 'number' && !Number.isNaN(x))
      .sort((a, b) => a - b);
    return v.length === 0 ? null : v[Math.floor((v.length - 1) / 2)];
  };
  const keys = [...new Set(rounds.flatMap((r) => Object.keys(r)))];
  console.log(
    JSON.stringify(
      {
        rounds: rounds.length,
        median: Object.fromEntries(keys.map((k) => [k, median(k)])),
        max: Object.fromEntries(
          keys.map((k) => [k, Math.max(...rounds.map((r) => r[k] ?? Number.NaN))]),
        ),
        loadavgAtStart: loadAtStart,
        loadavgAtEnd: load(),
        each: rounds,
      },
      null,
      2,
    ),
  );
} finally {
  if (process.env.PHASEBRIDGE_BENCH_KEEP !== undefined) {
    fs.writeFileSync(path.join(dir, 'leader.log'), leader.output());
    fs.writeFileSync(path.join(dir, 'standby.log'), standby.output());
    say(`kept ${dir}`);
  }
  await Promise.all([leader.stop(), standby.stop()]);
  client.disconnect();
  await fake.close();
  await Promise.all([pg.stop(), redis.stop()]);
  if (process.env.PHASEBRIDGE_BENCH_KEEP === undefined)
    fs.rmSync(dir, { recursive: true, force: true });
}
