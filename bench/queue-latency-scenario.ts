/**
 * The busy-bridge scenario of bench/queue-latency.ts (`--concurrent N`, the default mode when
 * N > 1): N runs active at once, as on a bridge serving N people, each slot going through cycles
 * of: its first step's agent works for a while (a few seconds), the run waits at its checkpoint
 * until a person approves (a random delay), the approval commits, the second step's agent is
 * spawned (the timed part: approve → spawn) and works for a while, the run completes. Slots
 * start at random offsets and every duration is random, so approvals arrive at staggered times
 * among runs that are starting, working, reporting progress and finishing, not all in the same
 * millisecond and not back to back. Durations come from a seeded generator (`--seed`), so two
 * invocations offer the same schedule.
 */

/** Durations of the scenario (ms). */
export interface ScenarioTiming {
  /** Slots start at a random offset in [0, startSpreadMs). */
  readonly startSpreadMs: number;
  /** Each agent works for a random time in this range. */
  readonly agentMs: readonly [number, number];
  /** A checkpoint waits this long (random, in range) for its approval. */
  readonly approvalDelayMs: readonly [number, number];
  /** Cycles per slot and phase. */
  readonly cycles: number;
}

/** The default timing: agents of 2–6 s, approvals 0.5–4 s after the checkpoint. */
export const DEFAULT_TIMING: ScenarioTiming = {
  startSpreadMs: 4000,
  agentMs: [2000, 6000],
  approvalDelayMs: [500, 4000],
  cycles: 2,
};

/** A seeded generator (mulberry32): the same seed gives the same schedule. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A uniform integer in [lo, hi]. */
export function between(rand: () => number, [lo, hi]: readonly [number, number]): number {
  return Math.round(lo + rand() * (hi - lo));
}

/** What one cycle of a slot is told: how long its agents work and when to approve. */
export interface CyclePlan {
  readonly slot: number;
  readonly cycle: number;
  /** The first step's agent works this long. */
  readonly firstMs: number;
  /** The checkpoint is approved this long after the run reached it. */
  readonly approveAfterMs: number;
  /** The second step's agent works this long. */
  readonly secondMs: number;
}

/** One slot's durations, fixed per slot (the agents of a slot are defined once). */
export interface SlotPlan {
  readonly slot: number;
  readonly startAfterMs: number;
  readonly firstMs: number;
  readonly secondMs: number;
}

/** The slots of a phase: random start offsets and agent durations. */
export function planSlots(n: number, timing: ScenarioTiming, rand: () => number): SlotPlan[] {
  return Array.from({ length: n }, (_, slot) => ({
    slot,
    startAfterMs: between(rand, [0, timing.startSpreadMs]),
    firstMs: between(rand, timing.agentMs),
    secondMs: between(rand, timing.agentMs),
  }));
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs a phase: every slot starts after its offset and goes through `timing.cycles` cycles of
 * `cycle` (which returns the approve → spawn time of that cycle, ms); resolves with all samples.
 */
export async function runPhase(
  slots: readonly SlotPlan[],
  timing: ScenarioTiming,
  rand: () => number,
  cycle: (plan: CyclePlan) => Promise<number>,
): Promise<number[]> {
  const samples: number[] = [];
  await Promise.all(
    slots.map(async (s) => {
      await sleep(s.startAfterMs);
      for (let c = 0; c < timing.cycles; c++) {
        const approveAfterMs = between(rand, timing.approvalDelayMs);
        samples.push(
          await cycle({
            slot: s.slot,
            cycle: c,
            firstMs: s.firstMs,
            approveAfterMs,
            secondMs: s.secondMs,
          }),
        );
      }
    }),
  );
  return samples;
}

/** p50/p90/p99/mean/max of samples (ms, 2 decimals). */
export function stats(samples: readonly number[]) {
  const s = [...samples].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  const r = (v: number) => Number(v.toFixed(2));
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return {
    n: s.length,
    p50: r(at(0.5)),
    p90: r(at(0.9)),
    p99: r(at(0.99)),
    mean: r(mean),
    max: r(s.at(-1)!),
  };
}
