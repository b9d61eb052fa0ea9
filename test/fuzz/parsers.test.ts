/**
 * The CI share of the parser fuzz (bench/fuzz.ts runs 100,000 cases): random and mutated input
 * at every parser a hostile file or request reaches; each answers with a value or a typed error.
 */
import fs from 'node:fs';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import { fuzzScratch, fuzzTargets } from '../../bench/fuzz-targets.ts';

const scratch = fuzzScratch();
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));
const targets = fuzzTargets(scratch);
/** 5,000 cases in all, spread over the targets. */
const RUNS = Math.ceil(5000 / targets.length);

describe('every parser answers hostile input', () => {
  for (const target of targets) {
    it(target.name, { timeout: 60_000 }, () => {
      fc.assert(
        fc.property(target.input, (text) => {
          target.run(text);
        }),
        { numRuns: RUNS },
      );
    });
  }
});
