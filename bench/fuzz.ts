/**
 * Parser fuzz at scale: 100,000 random and mutated inputs (FUZZ_CASES to change) spread over
 * every target of bench/fuzz-targets.ts. Prints JSON: cases, crashes, hangs (a case over
 * 2 s), unhandled rejections, and the slowest case per target.
 */
import fs from 'node:fs';
import fc from 'fast-check';
import { fuzzScratch, fuzzTargets } from './fuzz-targets.ts';

const TOTAL = Number(process.env.FUZZ_CASES ?? 100_000);
const HANG_MS = 2000;

let unhandled = 0;
process.on('unhandledRejection', () => {
  unhandled++;
});

const scratch = fuzzScratch();
const targets = fuzzTargets(scratch);
const perTarget = Math.ceil(TOTAL / targets.length);
const results: Record<
  string,
  { cases: number; crashes: number; hangs: number; slowestMs: number }
> = {};
let firstCrash: string | undefined;
try {
  for (const target of targets) {
    const r = { cases: 0, crashes: 0, hangs: 0, slowestMs: 0 };
    for (const text of fc.sample(target.input, perTarget)) {
      const t0 = performance.now();
      try {
        target.run(text);
      } catch (err) {
        r.crashes++;
        firstCrash ??= `${target.name}: ${(err as Error).message} <- ${JSON.stringify(text).slice(0, 200)}`;
      }
      const ms = performance.now() - t0;
      if (ms > HANG_MS) r.hangs++;
      r.slowestMs = Math.max(r.slowestMs, Math.round(ms * 10) / 10);
      r.cases++;
    }
    results[target.name] = r;
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true });
}
await new Promise((resolve) => setImmediate(resolve));
const sum = (k: 'cases' | 'crashes' | 'hangs') =>
  Object.values(results).reduce((n, r) => n + r[k], 0);
console.log(
  JSON.stringify(
    {
      bench: 'fuzz',
      cases: sum('cases'),
      crashes: sum('crashes'),
      hangs: sum('hangs'),
      unhandledRejections: unhandled,
      ...(firstCrash === undefined ? {} : { firstCrash }),
      targets: results,
    },
    null,
    2,
  ),
);
