/**
 * `bench/queue-latency.ts --stages`: where approval → spawn time goes. Subscribes to the stage
 * channel (src/trace.ts), keeps each run's marks from its `command` on, and for each timed
 * sample turns them into the time spent between consecutive stages. Prints p50/p99/max per
 * stage gap, the gaps of the slowest samples, and the event loop's delay while sampling (a long
 * gap with a long loop delay is the bridge's thread busy with something else, not the stage).
 */
import diagnostics from 'node:diagnostics_channel';
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import { STAGE_CHANNEL, STAGES, type Stage, type StageMark } from '../src/trace.ts';
import { stats } from './queue-latency-scenario.ts';

/** One sample's gaps: ms from the previous reached stage to this one. */
type Gaps = Partial<Record<Stage | 'callback', number>>;

const r = (v: number) => Number(v.toFixed(2));
const TICK_MS = 5;

/** Collects stage marks of the pipeline probe's runs. */
export class StageCollector {
  readonly #marks = new Map<string, Map<Stage, number>>();
  readonly #samples: { total: number; gaps: Gaps }[] = [];
  /** How late a 5 ms timer fires (ns), recorded only while the pipeline is measured. */
  readonly #loop: RecordableHistogram = createHistogram();
  #measuring = false;
  #last = performance.now();
  readonly #ticker = setInterval(() => {
    const now = performance.now();
    if (this.#measuring)
      this.#loop.record(Math.max(1, Math.round((now - this.#last - TICK_MS) * 1e6)));
    this.#last = now;
  }, TICK_MS);
  readonly #onMark = (m: unknown) => this.#mark(m as StageMark);

  constructor() {
    diagnostics.subscribe(STAGE_CHANNEL, this.#onMark);
  }

  /** Loop-delay sampling runs only while the pipeline is measured. */
  measuring(on: boolean): void {
    this.#measuring = on;
  }

  #mark({ runId, stage, at }: StageMark): void {
    if (stage === 'command') this.#marks.set(runId, new Map([[stage, at]]));
    const marks = this.#marks.get(runId);
    // The first time each stage is reached after the command (a run has one job in flight).
    if (marks !== undefined && !marks.has(stage)) marks.set(stage, at);
  }

  /** The sample of run `runId` ended at `end` (the probe's spawn callback); `total` its ms. */
  sample(runId: string, total: number, end: number): void {
    const marks = this.#marks.get(runId);
    this.#marks.delete(runId);
    if (marks === undefined) return;
    const gaps: Gaps = {};
    let prev: number | undefined;
    for (const stage of STAGES) {
      const at = marks.get(stage);
      if (at === undefined) continue;
      if (prev !== undefined) gaps[stage] = r(at - prev);
      prev = at;
    }
    if (prev !== undefined) gaps.callback = r(end - prev);
    this.#samples.push({ total: r(total), gaps });
  }

  /** The breakdown (JSON-ready). */
  report(worst = 5) {
    diagnostics.unsubscribe(STAGE_CHANNEL, this.#onMark);
    clearInterval(this.#ticker);
    const perStage: Record<string, ReturnType<typeof stats>> = {};
    for (const stage of [...STAGES.slice(1), 'callback'] as const) {
      const values = this.#samples.flatMap((s) => s.gaps[stage] ?? []);
      if (values.length > 0) perStage[stage] = stats(values);
    }
    const ms = (ns: number) => r(ns / 1e6);
    return {
      what: 'ms between consecutive stages of each pipeline sample (src/trace.ts)',
      perStage,
      slowest: [...this.#samples].sort((a, b) => b.total - a.total).slice(0, worst),
      eventLoopDelay: {
        what: 'ms the bridge thread was late for a 5 ms timer while the pipeline was measured',
        p50: ms(this.#loop.percentile(50)),
        p99: ms(this.#loop.percentile(99)),
        max: ms(this.#loop.max),
      },
    };
  }
}
