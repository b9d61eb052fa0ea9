/**
 * The flow format as a module: `.flow/runs/<id>/` (run.yaml, numbered activities, events.jsonl).
 * Its rules: flow's iron laws after every command; a blocked run shows its reason when resumed;
 * an active run gets flow's `session_end` line when the bridge stops.
 */
import type { LayoutModule } from '../module.ts';
import { flowLawViolation } from './laws.ts';

/** The flow layout module. */
export const flowModule: LayoutModule<'flow'> = {
  name: 'flow',
  async projection() {
    const { flowLayout } = await import('./index.ts');
    return () => flowLayout;
  },
  rules: {
    lawViolation(before, after) {
      const broken = flowLawViolation(before, after);
      return broken === null ? null : `refused by flow's iron laws: ${broken}`;
    },
  },
  sessionEnd: {
    async record(state, at) {
      // flow's SessionEnd marks active runs only; a blocked one already says why it stopped.
      if (state.status !== 'active' && state.status !== 'awaiting') return false;
      const { recordFlowSessionEnd } = await import('./session-end.ts');
      return recordFlowSessionEnd(state, at, 'phasebridge stopped');
    },
    logLine: (count) => `flow: ${count} active FlowRun(s) persisted`,
  },
  // Other layouts announce the block when it happens; flow's law asks for it at the resume too.
  words: { blockedReasonOnResume: true },
};
