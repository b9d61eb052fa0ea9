import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // CI must never run a focused subset.
    allowOnly: !process.env.CI,
    pool: 'forks',
    // Most long tests wait on platform pacing or child processes, not the CPU: on 2 cores the
    // default (one fork) left the second core idle and the suite took 11 minutes.
    maxWorkers: 3,
  },
});
