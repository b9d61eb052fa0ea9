/**
 * Benchmark: engine commit throughput against the raw I/O a commit must do.
 *   (a) raw: append + fsync one ledger line; write a temp file + fsync + rename + fsync the folder
 *   (b) RunStore.commit of real engine transitions with the native layout
 * Both on the same disk (a temp folder under the repo's .phasebridge/), interleaved in rounds so
 * disk-load changes hit both alike, with the same (average) line and run.json sizes. Each engine
 * run is RUN_LENGTH commands long, then a new run starts (its creation cost is included).
 * Prints one JSON object.
 *
 * Run: npx tsx bench/engine-commit.ts [--seconds 8]
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunState } from '../src/engine/model.ts';
import { RunStore } from '../src/engine/store/run-store.ts';
import { nextCommand, startCommand } from '../test/engine/store/fixtures/demo-run.ts';

/** Interleaved rounds; the median per-round ratio resists bursts of load from other processes. */
const ROUNDS = 20;
/** Commands per run (a realistic run: a few dozen transitions), then the next run starts. */
const RUN_LENGTH = 60;
const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const secondsArg = process.argv.indexOf('--seconds');
const budgetSec = secondsArg > 0 ? Number(process.argv[secondsArg + 1]) : 8;

const root = path.join(repo, '.phasebridge');
fs.mkdirSync(root, { recursive: true });
const tmp = fs.mkdtempSync(path.join(root, 'bench-commit-'));

/** The raw I/O of one commit, with the dir fd kept open (the cheapest honest version). */
class RawCommitter {
  readonly #dir: string;
  readonly #ledgerFd: number;
  readonly #dirFd: number;
  #n = 0;
  constructor(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.#dir = dir;
    this.#ledgerFd = fs.openSync(path.join(dir, 'ledger.jsonl'), 'a');
    this.#dirFd = fs.openSync(dir, 'r');
  }
  commit(line: Buffer, body: Buffer): void {
    fs.writeSync(this.#ledgerFd, line);
    fs.fsyncSync(this.#ledgerFd);
    const t = path.join(this.#dir, `.run.json.${this.#n++}.tmp`);
    const fd = fs.openSync(t, 'wx');
    fs.writeSync(fd, body);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(t, path.join(this.#dir, 'run.json'));
    fs.fsyncSync(this.#dirFd);
  }
  close(): void {
    fs.closeSync(this.#ledgerFd);
    fs.closeSync(this.#dirFd);
  }
}

/**
 * Drives demo runs of RUN_LENGTH commands each (then a new run), so files keep realistic sizes:
 * one endless run would grow run.json without bound (its checkpoint history) and measure that.
 */
class EngineDriver {
  readonly #store: RunStore;
  readonly #workspace: string;
  #run = 0;
  #n = 0;
  #state: RunState | null = null;
  constructor(workspace: string) {
    this.#workspace = workspace;
    this.#store = new RunStore({ workspace });
  }
  get runDir(): string {
    return path.join(this.#workspace, '.phasebridge', 'runs', this.#runId());
  }
  #runId(): string {
    return `2026-11-29T143000Z-bench-${this.#run}`;
  }
  async commit(): Promise<void> {
    if (this.#state === null || this.#n >= RUN_LENGTH) {
      if (this.#state !== null) await this.#store.release(this.#runId());
      this.#run++;
      this.#n = 0;
      const id = this.#runId();
      const r = await this.#store.commit(id, 'start', startCommand(id, this.#workspace));
      if (!r.ok) throw new Error(r.rejection.message);
      this.#state = r.state;
      return;
    }
    this.#n++;
    const r = await this.#store.commit(
      this.#runId(),
      `k${this.#n}`,
      nextCommand(this.#state, this.#n),
    );
    if (!r.ok) throw new Error(r.rejection.message);
    this.#state = r.state;
  }
  close(): Promise<void> {
    return this.#store.close();
  }
}

async function main(): Promise<void> {
  const workspace = path.join(tmp, 'ws');
  fs.mkdirSync(workspace);
  const engine = new EngineDriver(workspace);
  // Warm-up: one whole run, recording the average ledger line and run.json sizes of real commits.
  let runJsonTotal = 0;
  for (let i = 0; i < RUN_LENGTH; i++) {
    await engine.commit();
    runJsonTotal += fs.statSync(path.join(engine.runDir, 'run.json')).size;
  }
  const ledgerBytes = fs.statSync(path.join(engine.runDir, 'ledger.jsonl')).size;
  const lineBytes = Math.round(ledgerBytes / RUN_LENGTH);
  const runJsonBytes = Math.round(runJsonTotal / RUN_LENGTH);
  const line = Buffer.from(`${'x'.repeat(lineBytes - 1)}\n`);
  const body = Buffer.alloc(runJsonBytes, 'y');

  const raw = new RawCommitter(path.join(tmp, 'raw'));
  const calib = performance.now();
  for (let i = 0; i < 100; i++) raw.commit(line, body);
  const perOpMs = (performance.now() - calib) / 100;
  // Both sides together take ~2x the raw time (or more); fit the budget, keep N sane.
  const N = Math.max(200, Math.min(3000, Math.floor((budgetSec * 1000) / (perOpMs * 2.5))));
  const perRound = Math.ceil(N / ROUNDS);

  let rawMs = 0;
  let engineMs = 0;
  const roundRatios: number[] = [];
  const measureStart = performance.now();
  // The disk may slow down after calibration (other processes): stop early rather than overrun.
  for (
    let round = 0;
    round < ROUNDS && performance.now() - measureStart < budgetSec * 1500;
    round++
  ) {
    let t = performance.now();
    for (let i = 0; i < perRound; i++) raw.commit(line, body);
    const r = performance.now() - t;
    t = performance.now();
    for (let i = 0; i < perRound; i++) await engine.commit();
    const e = performance.now() - t;
    rawMs += r;
    engineMs += e;
    roundRatios.push(r / e);
  }
  roundRatios.sort((x, y) => x - y);
  const rounds = roundRatios.length;
  const median = roundRatios[Math.floor(rounds / 2)]!;
  raw.close();
  await engine.close();

  const total = perRound * rounds;
  const a = total / (rawMs / 1000);
  const b = total / (engineMs / 1000);
  console.log(
    JSON.stringify({
      bench: 'engine-commit',
      commitsPerSide: total,
      rounds,
      runLength: RUN_LENGTH,
      lineBytes,
      runJsonBytes,
      rawCommitsPerSec: Math.round(a),
      engineCommitsPerSec: Math.round(b),
      ratio: Number((b / a).toFixed(3)),
      medianRoundRatio: Number(median.toFixed(3)),
      goal: 0.67,
      meetsGoal: b / a >= 0.67,
      engineOverheadUsPerCommit: Math.round(((engineMs - rawMs) / total) * 1000),
      dir: path.relative(repo, tmp),
    }),
  );
}

try {
  await main();
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
