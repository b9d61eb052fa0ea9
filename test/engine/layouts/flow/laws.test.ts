/**
 * flow's iron laws in the engine: whatever humans and workers send to a flow-layout run, no
 * commit advances the phase past a step that recorded no finishing activity, a completed run
 * always has activities, and the engine refuses a transition that would break them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBoundary } from '../../../../src/engine/layouts/flow/activities.ts';
import { flowLawViolation } from '../../../../src/engine/layouts/flow/laws.ts';
import type { RunState } from '../../../../src/engine/model.ts';
import { FLOW_START_ISSUE_WORKFLOW } from '../../../../src/engine/workflow/builtin.ts';
import { BOB, Harness, T1 } from '../../harness.ts';

const kinds = fc.constantFrom(
  'finish',
  'finish',
  'finish',
  'loop',
  'fail',
  'approve',
  'reject',
  'loopAnswer',
  'skip',
  'pause',
  'resume',
  'retry',
  'revert',
  'cancel',
);

describe('flow iron laws', () => {
  it('hold for every accepted command sequence, and the engine never has to refuse one', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(kinds, fc.nat()), { maxLength: 60 }), (script) => {
        const h = new Harness();
        h.start(FLOW_START_ISSUE_WORKFLOW, { layout: 'flow' });
        let activities = 0;
        for (const [kind, n] of script) {
          if (['completed', 'failed', 'cancelled'].includes(h.run.status)) break;
          const before: RunState = h.run;
          const step = h.run.steps[h.run.cursor]!;
          let d: ReturnType<Harness['send']>;
          switch (kind) {
            case 'finish':
            case 'loop':
              if (step.status === 'queued')
                h.send({ type: 'stepStarted', stepId: step.id, attempt: step.attempt });
              d = h.send({
                type: 'stepFinished',
                stepId: step.id,
                attempt: step.attempt,
                exitCode: 0,
                directive: { action: kind === 'loop' ? 'loop' : 'continue' },
                telemetry: T1,
              });
              break;
            case 'fail':
              d = h.send({
                type: 'stepFailed',
                stepId: step.id,
                attempt: step.attempt,
                error: 'boom',
              });
              break;
            case 'approve':
            case 'reject':
              d = h.send({ type: 'answerCheckpoint', answer: kind, actor: BOB });
              break;
            case 'loopAnswer':
              d = h.send({ type: 'answerCheckpoint', answer: 'loop', actor: BOB });
              break;
            case 'revert': {
              const to = h.run.steps[n % (h.run.cursor + 1)]!.id;
              d = h.send({ type: 'revert', toStepId: to, source: 'command' });
              break;
            }
            default:
              d = h.send({ type: kind } as never);
          }
          if (!d.ok) {
            expect(d.rejection.message).not.toContain('iron laws');
            continue;
          }
          activities += d.events.filter(isBoundary).length;
          expect(flowLawViolation(before, h.run)).toBeNull();
          if (h.run.cursor > before.cursor) expect(activities).toBeGreaterThan(0);
          if (h.run.status === 'completed') expect(activities).toBeGreaterThan(0);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('names a phase advance past an unfinished step and a completion without activities', () => {
    const h = new Harness();
    h.start(FLOW_START_ISSUE_WORKFLOW, { layout: 'flow' });
    const before = h.run;
    const jumped: RunState = { ...before, cursor: 2 };
    expect(flowLawViolation(before, jumped)).toBe(
      'the phase would advance past step preflight, which recorded no finishing activity',
    );
    const completed: RunState = { ...before, status: 'completed' };
    expect(flowLawViolation(before, completed)).toBe(
      'the run would complete without any recorded activity',
    );
  });
});
