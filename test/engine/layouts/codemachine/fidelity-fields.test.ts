/**
 * Issue 18 item 1: template.json keys we do not own (CodeMachine's projectName, autonomousMode,
 * controllerConfig, controllerView, and anything newer) survive every command we commit.
 */
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../../src/engine/commands.ts';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import { ALICE, NO_TOKENS, RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

const GOLDEN = path.join(import.meta.dirname, 'golden', 'fidelity');

/** The foreign part of a template.json as CodeMachine writes it (the seed's schema, all set). */
const CODEMACHINE_FIELDS = {
  projectName: 'login-page',
  autonomousMode: 'never',
  controllerConfig: { agentId: 'controller', sessionId: 'ctl-sess-1', monitoringId: 7 },
  controllerView: true,
  futureKey: { nested: [1, 2, 3] },
};

function templateFile(h: Harness): string {
  return codemachinePaths(h.ws).template;
}

/** Adds CodeMachine's own fields to the file (and a foreign key to step 0's entry when present). */
function addCodemachineFields(h: Harness): void {
  const doc = JSON.parse(fs.readFileSync(templateFile(h), 'utf8'));
  Object.assign(doc, CODEMACHINE_FIELDS);
  if (doc.completedSteps['0']) doc.completedSteps['0'].engineHint = 'claude';
  fs.writeFileSync(templateFile(h), JSON.stringify(doc, null, 2));
}

function expectGolden(h: Harness, name: string): void {
  const actual = fs.readFileSync(templateFile(h), 'utf8');
  const file = path.join(GOLDEN, `${name}.golden.json`);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, actual);
  expect(actual, name).toBe(fs.readFileSync(file, 'utf8'));
}

/** Commits a command, ignoring a refusal (a random sequence often asks for the impossible). */
async function attempt(h: Harness, command: Record<string, unknown>): Promise<void> {
  const full = { ...command, at: h.d.now(), actor: ALICE } as Command;
  const r = await h.store.commit(RUN_ID, `k-${h.d.now()}`, full);
  if (r.ok) h.d.state = r.state;
}

describe('template.json fields we do not own', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(async () => {
    await h.dispose();
  });

  it('survive a cancel (golden before/after)', async () => {
    await h.d.start();
    await h.d.started('plan');
    await h.session('plan');
    await h.d.finished('plan');
    addCodemachineFields(h);
    expectGolden(h, '01-foreign-fields-before');
    await h.d.send({ type: 'cancel', reason: 'done for today' });
    expectGolden(h, '01-foreign-fields-after');
  });

  it('survive a reset command (only deleting the file starts from zero)', async () => {
    await h.d.start();
    await h.d.started('plan');
    await h.d.finished('plan');
    addCodemachineFields(h);
    await h.d.send({ type: 'reset', source: 'command' });
    const doc = JSON.parse(fs.readFileSync(templateFile(h), 'utf8'));
    expect(doc).toMatchObject(CODEMACHINE_FIELDS);
    expect(doc.completedSteps).toEqual({});
  });

  it('survive any sequence of our commands (property)', async () => {
    const step = fc.constantFrom('plan', 'build', 'review');
    const command = fc.oneof(
      step.map((stepId) => ({ kind: 'run', stepId })),
      fc.constant({ kind: 'skip' }),
      fc.constant({ kind: 'pause' }),
      fc.constant({ kind: 'resume' }),
      fc.constant({ kind: 'retry' }),
      fc.constant({ kind: 'loop' }),
      step.map((stepId) => ({ kind: 'revert', stepId })),
      fc.constant({ kind: 'reset' }),
      fc.constant({ kind: 'cancel' }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 12 }), async (commands) => {
        await h.dispose();
        h = makeHarness();
        await h.d.start();
        addCodemachineFields(h);
        for (const c of commands) {
          const cur = h.d.run.steps[h.d.run.cursor];
          if (c.kind === 'run' && 'stepId' in c) {
            const attemptNo = h.d.run.steps.find((s) => s.id === c.stepId)!.attempt;
            await attempt(h, { type: 'stepStarted', stepId: c.stepId, attempt: attemptNo });
            await attempt(h, {
              type: 'stepFinished',
              stepId: c.stepId,
              attempt: attemptNo,
              exitCode: 0,
              directive: { action: 'continue' },
              telemetry: NO_TOKENS,
            });
          } else if (c.kind === 'loop' && cur) {
            await attempt(h, { type: 'stepStarted', stepId: cur.id, attempt: cur.attempt });
            await attempt(h, {
              type: 'stepFinished',
              stepId: cur.id,
              attempt: cur.attempt,
              exitCode: 0,
              directive: { action: 'loop' },
              telemetry: NO_TOKENS,
            });
          } else if (c.kind === 'revert' && 'stepId' in c) {
            await attempt(h, { type: 'revert', toStepId: c.stepId, source: 'command' });
          } else if (c.kind !== 'run' && c.kind !== 'loop' && c.kind !== 'revert') {
            await attempt(h, {
              type: c.kind,
              ...(c.kind === 'reset' ? { source: 'command' } : {}),
            });
          }
        }
        const doc = JSON.parse(fs.readFileSync(templateFile(h), 'utf8'));
        expect(doc).toMatchObject(CODEMACHINE_FIELDS);
      }),
      { numRuns: 25 },
    );
  });
});
