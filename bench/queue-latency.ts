/**
 * Benchmark: checkpoint approval → the next step's agent process started, per queue driver, for
 * the real pipeline and for its floor (bench/queue-latency-probes.ts says what each includes).
 * Drivers: sqlite always; bullmq when redis-server (or REDIS_URL) is available, on a private
 * redis-server. Prints one JSON object.
 *
 * Modes:
 * - one run at a time (`--concurrent 1`, the default): `--runs` samples of each probe,
 *   interleaved (one of each per round, so load changes hit both alike), agents that finish at
 *   once; the first WARMUP of each are dropped.
 * - busy bridge (`--concurrent N`, N > 1): N runs active at once, agents that work for seconds,
 *   approvals at staggered random times (bench/queue-latency-scenario.ts): what a bridge with N
 *   people's runs sees. Phases alternate pipeline, floor, pipeline, floor (`--phases`, each N
 *   slots × `cycles` approvals) so load drift hits both; samples from every phase count.
 * - stress (`--concurrent N --stress`): N loops of start → checkpoint → approve → completed back
 *   to back with instant agents, i.e. N agent spawns always in flight: it saturates a small
 *   machine and measures how it copes, not what a person waits for. Rounds of 2N samples of
 *   each probe alternate; the first round is warm-up.
 * The workspace is a plain folder in the system temp folder (not a git repository: in one, the
 * worker snapshots the tree with git before each step, which adds git's own time).
 *
 * Run: npx tsx bench/queue-latency.ts [--runs 200] [--layout native|codemachine]
 *      [--concurrent 50 [--stress] [--phases 4] [--cycles 2] [--seed 15]]
 *      [--agent demo|light] [--drivers sqlite,bullmq] [--stages] [--nice 10]
 *      [--checkpoints thread|main]
 * `--stages` adds, per driver, where the pipeline's time goes (bench/queue-latency-stages.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBackgroundCheckpoints } from '../src/db/checkpointer.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import type { Layout } from '../src/engine/model.ts';
import { createJobQueue, type QueueConfig } from '../src/jobs/queue/create-queue.ts';
import { createLogger } from '../src/log.ts';
import { redisAvailable, startRedis } from '../test/support/redis.ts';
import { type AgentKind, FloorProbe, PipelineProbe, saturate } from './queue-latency-probes.ts';
import {
  DEFAULT_TIMING,
  planSlots,
  runPhase,
  type ScenarioTiming,
  seededRandom,
  stats,
} from './queue-latency-scenario.ts';
import { StageCollector } from './queue-latency-stages.ts';

const WARMUP = 10;
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const RUNS = Number(arg('runs') ?? 200);
const LAYOUT = (arg('layout') ?? 'native') as Layout;
const CONCURRENT = Number(arg('concurrent') ?? 1);
const STRESS = process.argv.includes('--stress');
// At least one phase of each probe (they alternate, pipeline first).
const PHASES = Math.max(2, Number(arg('phases') ?? 4));
const SEED = Number(arg('seed') ?? 15);
const TIMING: ScenarioTiming = { ...DEFAULT_TIMING, cycles: Number(arg('cycles') ?? 2) };
const DRIVERS = (arg('drivers') ?? 'sqlite,bullmq').split(',');
const STAGE_BREAKDOWN = process.argv.includes('--stages');
/** Agents' priority below the bridge's (`--nice`; default 10 = PHASEBRIDGE_AGENT_NICE's). */
const NICE = Number(arg('nice') ?? 10);
/** Where bridge.db's WAL checkpoints run: `thread` (serve's way) or `main` (SQLite's default). */
const CHECKPOINTS = arg('checkpoints') === 'main' ? 'main' : 'thread';
/**
 * The agent spawned: `demo` (examples/demo-agent.mjs, a Node process, as real agents are) or
 * `light` (`cat`: the prompt in, the same out), which leaves the queue's own cost visible when
 * many agents at once would otherwise measure how fast two cores start Node processes. The
 * busy-bridge mode always uses `demo` (its agents work for a set time).
 */
const AGENT: AgentKind =
  arg('agent') === 'light' && (CONCURRENT === 1 || STRESS) ? 'light' : 'demo';
const MODE = CONCURRENT <= 1 ? 'single' : STRESS ? 'stress' : 'busy';
process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=0';
const SLOTS = MODE === 'busy' ? planSlots(CONCURRENT, TIMING, seededRandom(SEED)) : [];

async function measure(
  name: string,
  config: (db: BridgeDb, part: string) => QueueConfig,
  dir: string,
) {
  const open = async (part: string) => {
    fs.mkdirSync(path.join(dir, part), { recursive: true });
    const db = openBridgeDb({ file: path.join(dir, part, 'bridge.db') });
    await migrateToLatest(db);
    // As serve does: WAL checkpoints on their own thread (`--checkpoints main`: SQLite's own).
    const checkpoints =
      CHECKPOINTS === 'thread'
        ? await startBackgroundCheckpoints(db, createLogger({ level: 'silent' }))
        : null;
    return { db, checkpoints, queue: await createJobQueue(config(db, part)) };
  };
  const real = await open('pipeline');
  const base = await open('floor');
  const stages = STAGE_BREAKDOWN ? new StageCollector() : null;
  const opts = {
    agent: AGENT,
    layout: LAYOUT,
    concurrency: CONCURRENT,
    nice: NICE,
    slots: SLOTS,
    ...(stages === null ? {} : { onSample: stages.sample.bind(stages) }),
  };
  const pipeline = await PipelineProbe.open(real.db, real.queue, path.join(dir, 'pipeline'), opts);
  const floor = await FloorProbe.open(base.queue, path.join(dir, 'floor'), opts);
  const p: number[] = [];
  const f: number[] = [];
  try {
    if (MODE === 'busy') {
      // The same slots for both probes; approval delays drawn per cycle from one seeded stream.
      const rand = seededRandom(SEED + 1);
      for (let i = 0; i < PHASES; i++) {
        const probe = i % 2 === 0 ? pipeline : floor;
        stages?.measuring(probe === pipeline);
        const got = await runPhase(SLOTS, TIMING, rand, (plan) => probe.cycle(plan));
        (i % 2 === 0 ? p : f).push(...got);
      }
    } else if (MODE === 'stress') {
      const perRound = CONCURRENT * 2;
      const rounds = Math.ceil(RUNS / perRound);
      for (let i = 0; i <= rounds; i++) {
        stages?.measuring(true);
        const a = await saturate(pipeline, CONCURRENT, perRound);
        stages?.measuring(false);
        const b = await saturate(floor, CONCURRENT, perRound);
        if (i > 0) {
          p.push(...a);
          f.push(...b);
        }
      }
    } else {
      stages?.measuring(true);
      for (let i = 0; i < RUNS + WARMUP; i++) {
        const a = await pipeline.sample();
        const b = await floor.sample();
        if (i >= WARMUP) {
          p.push(a);
          f.push(b);
        }
      }
    }
  } finally {
    await pipeline.close();
    floor.close();
    for (const part of [real, base]) {
      await part.queue.close();
      await part.checkpoints?.close();
      await part.db.close();
    }
  }
  const ps = stats(p);
  const fs_ = stats(f);
  return {
    driver: name,
    pipeline: ps,
    floor: fs_,
    ratio: {
      p50: Number((ps.p50 / fs_.p50).toFixed(2)),
      p99: Number((ps.p99 / fs_.p99).toFixed(2)),
      max: Number((ps.max / fs_.max).toFixed(2)),
    },
    goals: {
      p50Within2xFloor: ps.p50 <= 2 * fs_.p50,
      p99Within2xFloor: ps.p99 <= 2 * fs_.p99,
      ...(name === 'sqlite' ? { p99Under50ms: ps.p99 <= 50 } : {}),
    },
    ...(stages === null ? {} : { stages: stages.report() }),
  };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-latency-'));
  const results: unknown[] = [];
  const load = [fs.readFileSync('/proc/loadavg', 'utf8').trim()];
  try {
    if (DRIVERS.includes('sqlite')) {
      const sqliteDir = path.join(dir, 'sqlite');
      results.push(await measure('sqlite', (db) => ({ driver: 'sqlite', db }), sqliteDir));
      load.push(fs.readFileSync('/proc/loadavg', 'utf8').trim());
    }
    const redis = DRIVERS.includes('bullmq')
      ? redisAvailable()
      : { ok: false as const, reason: 'not asked for (--drivers)' };
    if (redis.ok) {
      const handle = await startRedis();
      try {
        const bullDir = path.join(dir, 'bullmq');
        results.push(
          await measure(
            'bullmq',
            (_db, part) => ({
              driver: 'bullmq',
              url: handle.url,
              prefix: `bench-${process.pid}-${part}`,
            }),
            bullDir,
          ),
        );
        load.push(fs.readFileSync('/proc/loadavg', 'utf8').trim());
      } finally {
        await handle.stop();
      }
    } else {
      results.push({ driver: 'bullmq', skipped: redis.reason });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    JSON.stringify({
      bench: 'queue-latency',
      what: 'ms from approve committed-call to the next agent spawn event',
      mode: MODE,
      concurrent: CONCURRENT,
      ...(MODE === 'busy'
        ? { timing: TIMING, phases: PHASES, seed: SEED }
        : { runs: RUNS, warmup: MODE === 'stress' ? `one round of ${CONCURRENT * 2}` : WARMUP }),
      agent: AGENT,
      layout: LAYOUT,
      agentNice: NICE,
      checkpoints: CHECKPOINTS,
      node: process.version,
      cpus: os.cpus().length,
      loadavg: load,
      results,
    }),
  );
}

await main();
