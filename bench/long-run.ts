/**
 * Benchmark: does a commit's cost grow with the run's length? RunStore.commit throughput (native
 * layout, real disk) for a 10-step and a 10,000-step workflow, side by side in one process,
 * interleaved in rounds so disk-load changes hit both alike.
 *   short: runs of a 10-step workflow (each step started, then finished), a new run when one
 *          ends (its start is not timed);
 *   long:  one run of a 10,000-step workflow, measured from step LONG_FROM on. Its ledger up to
 *          there is written up front with the engine's own decide/evolve and line format (no
 *          fsync per line, which would take minutes), then loaded by the RunStore like any run.
 * Prints one JSON object; `ratio` = long commits/s ÷ short commits/s (goal ≥ 0.5).
 *
 * Run: npx tsx bench/long-run.ts [--seconds 8]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from '../src/engine/commands.ts';
import { decide } from '../src/engine/decide.ts';
import { evolve } from '../src/engine/evolve.ts';
import { formatLedgerLine } from '../src/engine/ledger/ledger-format.ts';
import type { RunState, Workflow } from '../src/engine/model.ts';
import { RunStore } from '../src/engine/store/run-store.ts';

const SHORT_STEPS = 10;
const LONG_STEPS = 10_000;
/** The long run is measured from this step on (its middle and late part). */
const LONG_FROM = 6_000;
const ROUNDS = 20;
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const secondsArg = process.argv.indexOf('--seconds');
const budgetSec = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 8;
const root = path.join(repo, '.phasebridge');
fs.mkdirSync(root, { recursive: true });
const tmp = fs.mkdtempSync(path.join(root, 'bench-long-run-'));

const AT = '2026-11-29T14:30:00.000Z';
const ACTOR = { id: 'system' };
const TOKENS = { tokensIn: 10, tokensOut: 20, cachedTokens: 0, costUsd: 0.01 };

function workflow(id: string, steps: number): Workflow {
  return {
    id,
    version: '000000000000',
    file: `${id}.workflow.yaml`,
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${i}`,
      agent: 'demo',
      prompt: `Do part ${i} of the work described in the specification.`,
    })),
  };
}

function startOf(runId: string, workspace: string, wf: Workflow): Command {
  return {
    type: 'start',
    at: AT,
    actor: { id: 'cli:bench' },
    runId,
    workflow: wf,
    workspace,
    layout: 'native',
    spec: 'Benchmark the store.',
  };
}

/** The next command of a run: start the queued step, finish the running one. */
function nextOf(state: RunState): Command {
  const step = state.steps[state.cursor]!;
  if (step.status === 'queued') {
    return { type: 'stepStarted', at: AT, actor: ACTOR, stepId: step.id, attempt: step.attempt };
  }
  return {
    type: 'stepFinished',
    at: AT,
    actor: ACTOR,
    stepId: step.id,
    attempt: step.attempt,
    exitCode: 0,
    directive: { action: 'continue' },
    telemetry: TOKENS,
  };
}

/** Drives one workflow's runs through a RunStore, one commit per call. */
class Side {
  readonly store: RunStore;
  readonly #workspace: string;
  readonly #wf: Workflow;
  #run = 0;
  #n = 0;
  state: RunState | null = null;

  constructor(name: string, steps: number) {
    this.#workspace = path.join(tmp, name);
    fs.mkdirSync(this.#workspace);
    this.store = new RunStore({ workspace: this.#workspace });
    this.#wf = workflow(name, steps);
  }

  runId(): string {
    return `2026-11-29T143000Z-${this.#wf.id}-${this.#run}`;
  }

  runDir(): string {
    return path.join(this.#workspace, '.phasebridge', 'runs', this.runId());
  }

  /** Starts a new run when there is none or it ended (untimed by the caller). */
  async ensureRun(): Promise<void> {
    if (this.state !== null && this.state.status === 'active') return;
    if (this.state !== null) await this.store.release(this.runId());
    this.#run++;
    this.#n = 0;
    const r = await this.store.commit(
      this.runId(),
      'start',
      startOf(this.runId(), this.#workspace, this.#wf),
    );
    if (!r.ok) throw new Error(r.rejection.message);
    this.state = r.state;
  }

  /** Writes a ledger of `steps` finished steps (no fsync per line), then loads it. */
  async prefill(steps: number): Promise<number> {
    this.#run++;
    const runId = this.runId();
    fs.mkdirSync(this.runDir(), { recursive: true });
    let state: RunState | null = null;
    const lines: string[] = [];
    for (
      let i = 0;
      state === null || state.cursor < steps || state.steps[state.cursor]!.status !== 'queued';
      i++
    ) {
      const command = state === null ? startOf(runId, this.#workspace, this.#wf) : nextOf(state);
      const d = decide(state, command);
      if (!d.ok) throw new Error(d.rejection.message);
      for (const e of d.events) state = evolve(state, e);
      lines.push(
        formatLedgerLine({
          v: 1,
          seq: state!.seq,
          key: i === 0 ? 'start' : `k${i}`,
          at: AT,
          command: command.type,
          actor: command.actor,
          events: d.events,
          effects: d.effects,
        }),
      );
    }
    this.#n = lines.length;
    fs.writeFileSync(path.join(this.runDir(), 'ledger.jsonl'), lines.join(''));
    const t = performance.now();
    this.state = (await this.store.load(runId)).state;
    return performance.now() - t;
  }

  async commit(): Promise<void> {
    this.#n++;
    const r = await this.store.commit(this.runId(), `k${this.#n}`, nextOf(this.state!));
    if (!r.ok) throw new Error(r.rejection.message);
    if (r.warnings) throw new Error(r.warnings.join('; '));
    this.state = r.state;
  }
}

async function main(): Promise<void> {
  const short = new Side('short', SHORT_STEPS);
  const long = new Side('long', LONG_STEPS);
  const loadMs = await long.prefill(LONG_FROM);
  const ledgerBytes = fs.statSync(path.join(long.runDir(), 'ledger.jsonl')).size;

  // Calibrate on the short side, then size the rounds to fit the time budget.
  await short.ensureRun();
  const calib = performance.now();
  for (let i = 0; i < 40; i++) {
    await short.ensureRun();
    await short.commit();
  }
  const perOpMs = (performance.now() - calib) / 40;
  const perSide = Math.max(200, Math.min(4000, Math.floor((budgetSec * 1000) / (perOpMs * 2.2))));
  // Never past the long workflow's end (two commits per step).
  const perRound = Math.min(
    Math.ceil(perSide / ROUNDS),
    Math.floor(((LONG_STEPS - LONG_FROM) * 2 - 10) / ROUNDS),
  );

  let shortMs = 0;
  let longMs = 0;
  const ratios: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    let s = 0;
    for (let i = 0; i < perRound; i++) {
      await short.ensureRun();
      const t = performance.now();
      await short.commit();
      s += performance.now() - t;
    }
    const t = performance.now();
    for (let i = 0; i < perRound; i++) await long.commit();
    const l = performance.now() - t;
    shortMs += s;
    longMs += l;
    ratios.push(s / l);
  }
  ratios.sort((a, b) => a - b);
  const total = perRound * ROUNDS;
  const shortRate = total / (shortMs / 1000);
  const longRate = total / (longMs / 1000);
  const ratio = longRate / shortRate;
  const runJsonBytes = {
    short: fs.statSync(path.join(short.runDir(), 'run.json')).size,
    long: fs.statSync(path.join(long.runDir(), 'run.json')).size,
  };
  await short.store.close();
  await long.store.close();
  console.log(
    JSON.stringify({
      bench: 'long-run',
      shortSteps: SHORT_STEPS,
      longSteps: LONG_STEPS,
      longMeasuredFromStep: LONG_FROM,
      longMeasuredToStep: long.state!.cursor,
      commitsPerSide: total,
      rounds: ROUNDS,
      shortCommitsPerSec: Math.round(shortRate),
      longCommitsPerSec: Math.round(longRate),
      ratio: Number(ratio.toFixed(3)),
      medianRoundRatio: Number(ratios[Math.floor(ROUNDS / 2)]!.toFixed(3)),
      goal: 0.5,
      meetsGoal: ratio >= 0.5,
      longOverheadUsPerCommit: Math.round(((longMs - shortMs) / total) * 1000),
      runJsonBytes,
      longLedgerBytesAtLoad: ledgerBytes,
      longLoadMs: Math.round(loadMs),
      dir: path.relative(repo, tmp),
    }),
  );
}

try {
  await main();
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
