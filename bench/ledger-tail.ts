/**
 * Benchmark: what another process's commit costs the change feed, for a short and a long run.
 * The feed reads the run's ledger on from where its last read ended (src/jobs/orchestrator/
 * ledger-read.ts), so one appended line should cost the same at 20 lines of history as at 5,000.
 * For each length: the ledger is written through the RunStore, read once, then one more commit is
 * appended and read again (resumed), timed over `--rounds`; a whole read+replay is timed beside it.
 * Prints one JSON object: per length the median resumed and whole read in ms, bytes each read.
 *
 * Run: npx tsx bench/ledger-tail.ts [--rounds 30]
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { analyzeRun } from '../src/engine/store/run-analysis.ts';
import { RunStore } from '../src/engine/store/run-store.ts';
import { LedgerTails } from '../src/jobs/orchestrator/ledger-read.ts';
import { nextCommand } from '../test/engine/store/fixtures/demo-run.ts';
import { driveRun, RUN, runFiles, tempWorkspace } from '../test/engine/store/fixtures/workspace.ts';

const roundsArg = process.argv.indexOf('--rounds');
const ROUNDS = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 30;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.floor(s.length / 2)]!.toFixed(3));
}

async function measure(commands: number) {
  const ws = tempWorkspace();
  const store = new RunStore({ workspace: ws });
  try {
    let state = await driveRun(store, ws, commands);
    const { dir, ledger } = runFiles(ws);
    const tails = new LedgerTails();
    tails.read(store, RUN, state.seq);
    const resumed: number[] = [];
    const whole: number[] = [];
    let bytesBefore = fs.statSync(ledger).size;
    let appended = 0;
    for (let i = 0; i < ROUNDS; i++) {
      const r = await store.commit(RUN, `bench${i}`, nextCommand(state, 10_000 + i));
      if (!r.ok) throw new Error(r.rejection.message);
      appended = fs.statSync(ledger).size - bytesBefore;
      bytesBefore += appended;
      let t = performance.now();
      const read = tails.read(store, RUN, state.seq);
      resumed.push(performance.now() - t);
      const full = analyzeRun(RUN, dir, ledger).state;
      if (read.state.seq !== full?.seq)
        throw new Error(
          `resumed read at seq ${read.state.seq}, the ledger at ${full?.seq}, commit ${r.state.seq}`,
        );
      t = performance.now();
      analyzeRun(RUN, dir, ledger);
      whole.push(performance.now() - t);
      state = r.state;
    }
    return {
      ledger_lines: commands + 1 + ROUNDS,
      ledger_bytes: bytesBefore,
      resumed_read_ms: median(resumed),
      resumed_read_bytes: appended,
      whole_read_ms: median(whole),
    };
  } finally {
    await store.close();
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

const short = await measure(20);
const long = await measure(5_000);
console.log(
  JSON.stringify(
    {
      rounds: ROUNDS,
      short,
      long,
      // Goal: ≤ 2, one commit costs the feed about the same whatever the run's length.
      resumed_ratio_long_to_short: Number(
        (long.resumed_read_ms / short.resumed_read_ms).toFixed(2),
      ),
      whole_ratio_long_to_short: Number((long.whole_read_ms / short.whole_read_ms).toFixed(2)),
    },
    null,
    2,
  ),
);
