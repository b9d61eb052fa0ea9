/**
 * The coordinator format as a module: `.coordinator/state.json` (seed 004). Its rules: the
 * workflow must follow the seed's state machine, which every command is checked against; a plan
 * step's checkpoint asks to confirm the plan; an interrupted session must be resumed, restarted
 * or aborted before a new one starts; a session without a track follows its first one.
 */
import { ConflictError } from '../../../errors.ts';
import type { LayoutModule } from '../module.ts';
import { STEP_PHASES } from './format.ts';
import { coordinatorLawViolation, coordinatorWorkflowProblem } from './laws.ts';
import { coordinatorOutcomeLines } from './words.ts';

/** The coordinator layout module. */
export const coordinatorModule: LayoutModule<'coordinator'> = {
  name: 'coordinator',
  async projection() {
    const { coordinatorLayout } = await import('./index.ts');
    return () => coordinatorLayout;
  },
  rules: {
    startProblem(c) {
      const problem = coordinatorWorkflowProblem(
        c.workflow,
        c.selectedTrack,
        c.selectedConditions ?? [],
      );
      return problem === null ? null : `coordinator layout: ${problem}`;
    },
    lawViolation(before, after) {
      const broken = coordinatorLawViolation(before, after);
      return broken === null ? null : `refused by the coordinator's state machine: ${broken}`;
    },
    // A coordinator's plan asks to confirm the plan (seed 004).
    afterCheckpointAsk(_state, step) {
      return STEP_PHASES[step.id] === 'PLANNING'
        ? `confirm plan: step ${step.id} finished; approve to start executing the tasks`
        : null;
    },
  },
  start: {
    /** A session that is not IDLE must be resumed, restarted or aborted first (seed 004). */
    async assertReady(workspace) {
      const { readSessionHead } = await import('./index.ts');
      const head = readSessionHead(workspace);
      if (head === null || head.state === 'IDLE') return;
      throw new ConflictError(
        `${workspace} holds an interrupted coordinator session (${String(head.session_id)}, state ${String(head.state)}): run \`phasebridge sessions\` to resume, restart or abort it`,
      );
    },
    // The bridge's default is written into the run's workflow, so a restart with another
    // setting does not change what a running session does at its end.
    workflow: (wf, settings) =>
      wf.coordinator === undefined && settings.coordinatorOnComplete !== undefined
        ? { ...wf, coordinator: { onComplete: settings.coordinatorOnComplete } }
        : wf,
    // A session without a chosen track is supervised (its first track), as in chat.
    defaultTrack: (wf) => wf.tracks?.[0],
  },
  sessionEnd: {
    async record(state, at) {
      const { recordCoordinatorSessionEnd } = await import('./index.ts');
      return recordCoordinatorSessionEnd(state, at);
    },
    logLine: (count) => `coordinator: ${count} session(s) persisted`,
  },
  words: { outcomeLines: coordinatorOutcomeLines },
};
