import { defineConfig } from 'vitest/config';

/**
 * The tests Stryker runs (`npm run mutate`): the in-process unit and property tests of the mutated
 * modules only. The whole suite imports the engine, so "related" tests would be all of it.
 * `npm run mutate -- --tests a.test.ts,b.test.ts` narrows them (scripts/mutate.mjs).
 */
export default defineConfig({
  test: {
    include: process.env.PHASEBRIDGE_MUTATE_TESTS?.split(',') ?? [
      'test/engine/*.test.ts',
      'test/engine/pabcd/*.test.ts',
      'test/engine/tasks/*.test.ts',
      'test/bridges/outbox/pacer*.test.ts',
    ],
    testTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
