/**
 * A coordinator session interrupted by SIGKILL in the last three states (MERGING, VERIFYING and SUMMARIZING) and resumed
 * from chat (issue 14, seed 004's resume table): discovery, merging, verification and the summary
 * run again (once), the plan is shown again for confirmation, execution goes on with only the
 * unfinished tasks. The harness and the story are in sessions-sigkill.ts; the other states, Abort
 * and Restart are in the files beside this one (split so the forks share them).
 */
import { describe, it } from 'vitest';
import { CASES, resumeStory, TIMEOUT_MS } from './sessions-sigkill.ts';

describe('a coordinator session SIGKILLed in each state, resumed from chat', () => {
  it.each(CASES.slice(3))('$state: Resume does what the seed says', { timeout: TIMEOUT_MS }, (c) =>
    resumeStory(c),
  );
});
