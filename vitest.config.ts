import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.ts';
import { slow } from './test/support/slowdown.ts';
import { SLOW_FILES, SLOW_GLOBS } from './test/support/tiers.ts';

const ALL = ['test/**/*.test.ts'];
const SLOW = [...SLOW_GLOBS, ...SLOW_FILES];

export default defineConfig({
  test: {
    // No include here: `extends: true` would merge it into each project's list.
    // Deadlines, not speed goals: PHASEBRIDGE_TEST_SLOWDOWN (default 1, CI may set 3) scales them.
    // 60 s covers every test (a test needing more says `slow(ms)`): a deadline only bounds a
    // wait for an event, so a generous one costs nothing when the test passes.
    testTimeout: slow(60_000),
    hookTimeout: slow(60_000),
    teardownTimeout: slow(10_000),
    // CI must never run a focused subset.
    allowOnly: !process.env.CI,
    // An error no test awaited (a watcher, a socket) fails the run: it is a defect, not noise.
    dangerouslyIgnoreUnhandledErrors: false,
    // Agents at the suite's own CPU priority (PHASEBRIDGE_AGENT_NICE, default 10 in production,
    // where agents are the heavy work). Here the demo agents are the critical path of the
    // multi-process stories: lowered (and their autogroups with them) below three busy forks,
    // each agent start waited seconds for CPU (a coordinator session to MERGING took 31 s instead
    // of 3 s at load 17). test/cli/agent-priority.test.ts sets it itself.
    env: { PHASEBRIDGE_AGENT_NICE: process.env.PHASEBRIDGE_AGENT_NICE ?? '0' },
    // Longest files first, both tiers in one queue, also on a fresh clone with no timing cache.
    sequence: { sequencer: LongestFirstSequencer },
    pool: 'forks',
    // Most slow tests wait on platform pacing or child processes, not the CPU: on 2 cores the
    // default (one fork) left the second core idle and the suite took 11 minutes.
    maxWorkers: 3,
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ALL,
          exclude: SLOW,
          // One module graph per fork, not per file: importing the source afresh for each of the
          // ~150 files was most of the tier's time (import 456 s of 452 s wall on 2 forks, load
          // 11-18; 51 s of 105 s without). Green in file order and shuffled (docs/test-reliability.md).
          isolate: false,
          // A fast file that starts a child process fails at once, saying it belongs in the slow tier.
          setupFiles: ['test/support/fast-tier-guard.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'slow',
          include: SLOW,
          // One module graph per fork here too: importing the source afresh for each slow file
          // cost 275 s of the suite's 1,706 s of file time. Each file's env, working folder and
          // umask are put back after it (docs/test-reliability.md, "Tiers").
          isolate: false,
          setupFiles: ['test/support/shared-fork.ts'],
        },
      },
    ],
  },
});
