/**
 * Issue 18, round trip: our template.json read with CodeMachine's own rules (seed: a step whose
 * completedSteps entry has completedAt is skipped; a restart resumes from notCompletedSteps)
 * says what our run's state says, after any sequence of our commands.
 */
import fs from 'node:fs';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../../src/engine/commands.ts';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import { isTerminal, type RunState } from '../../../../src/engine/model.ts';
import { ALICE, NO_TOKENS, RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

/** What CodeMachine does with a template.json on restart: the steps it skips, where it resumes. */
function codemachineReading(doc: {
  completedSteps?: Record<string, { completedAt?: string }>;
  notCompletedSteps?: number[];
  resumeFromLastStep?: boolean;
}): { skipped: number[]; resumeAt: number | null } {
  const skipped = Object.entries(doc.completedSteps ?? {})
    .filter(([, data]) => data.completedAt !== undefined)
    .map(([key]) => Number(key))
    .sort((a, b) => a - b);
  const pending = doc.notCompletedSteps ?? [];
  const resumeAt = doc.resumeFromLastStep !== false && pending.length > 0 ? pending[0]! : null;
  return { skipped, resumeAt };
}

/** The same two facts from our run's state. */
function ourReading(state: RunState): { skipped: number[]; resumeAt: number | null } {
  const skipped = state.steps
    .filter((s) => s.status === 'completed' || (s.status === 'skipped' && !s.excluded))
    .map((s) => s.index);
  const cur = state.steps[state.cursor];
  // Definitely started and not finished: running, or failed (a crash or an error).
  const unfinished =
    cur !== undefined &&
    !isTerminal(state.status) &&
    (cur.status === 'running' || cur.status === 'failed');
  return { skipped, resumeAt: unfinished ? cur.index : null };
}

async function attempt(h: Harness, command: Record<string, unknown>): Promise<void> {
  const full = { ...command, at: h.d.now(), actor: ALICE } as Command;
  const r = await h.store.commit(RUN_ID, `k-${h.d.now()}`, full);
  if (r.ok) h.d.state = r.state;
}

describe("CodeMachine's reading of our template.json", () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('skips what we completed and resumes where we stopped, after any commands (property)', async () => {
    const step = fc.constantFrom('plan', 'build', 'review');
    const command = fc.oneof(
      step.map((stepId) => ({ kind: 'start-step', stepId })),
      step.map((stepId) => ({ kind: 'run', stepId })),
      fc.constant({ kind: 'skip' }),
      fc.constant({ kind: 'pause' }),
      fc.constant({ kind: 'resume' }),
      fc.constant({ kind: 'retry' }),
      fc.constant({ kind: 'loop' }),
      step.map((stepId) => ({ kind: 'revert', stepId })),
      fc.constant({ kind: 'reset' }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 12 }), async (commands) => {
        await h.dispose();
        h = makeHarness();
        await h.d.start();
        for (const c of commands) {
          const cur = h.d.run.steps[h.d.run.cursor];
          const stepId = 'stepId' in c ? c.stepId : cur?.id;
          const attemptNo = h.d.run.steps.find((s) => s.id === stepId)?.attempt ?? 0;
          if (c.kind === 'start-step' || c.kind === 'run' || c.kind === 'loop') {
            await attempt(h, { type: 'stepStarted', stepId, attempt: attemptNo });
            if (c.kind === 'start-step') continue;
            await attempt(h, {
              type: 'stepFinished',
              stepId,
              attempt: attemptNo,
              exitCode: 0,
              directive: { action: c.kind === 'loop' ? 'loop' : 'continue' },
              telemetry: NO_TOKENS,
            });
          } else if (c.kind === 'revert') {
            await attempt(h, { type: 'revert', toStepId: stepId, source: 'command' });
          } else {
            await attempt(h, {
              type: c.kind,
              ...(c.kind === 'reset' ? { source: 'command' } : {}),
            });
          }
        }
        const doc = JSON.parse(fs.readFileSync(codemachinePaths(h.ws).template, 'utf8'));
        const theirs = codemachineReading(doc);
        const ours = ourReading(h.d.run);
        expect(theirs.skipped).toEqual(ours.skipped);
        if (ours.resumeAt !== null) expect(theirs.resumeAt).toBe(ours.resumeAt);
      }),
      { numRuns: 40 },
    );
  });
});
