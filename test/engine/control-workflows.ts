/** Workflows the control command tests (decide-control, decide-revert-reset) drive runs of. */
import { wf } from './harness.ts';

/** Four steps; c loops back to b at most 3 times. */
export const FOUR = wf(`
id: four
steps:
  - { id: a, agent: x, prompt: p }
  - { id: b, agent: x, prompt: p }
  - { id: c, agent: x, prompt: p, loop: { backTo: b, max: 3 } }
  - { id: d, agent: x, prompt: p }
`);

/** Two tracks; audit runs only in the enterprise one. */
export const TRACKED = wf(`
id: tracked
tracks: [quick, enterprise]
steps:
  - { id: plan, agent: x, prompt: p }
  - { id: audit, agent: x, prompt: p, tracks: [enterprise] }
  - { id: build, agent: x, prompt: p }
  - { id: ship, agent: x, prompt: p }
`);
