/**
 * Who a phase move is recorded as: a person's command from chat or the CLI is a human move, an
 * agent's report or a timer an orchestrated one, and the gate a refusal names is the gate in the
 * way (pure decide/evolve, codexclaw layout).
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/engine/decide.ts';
import type { PhaseMove } from '../../../src/engine/pabcd/phases.ts';
import { PABCD_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';
import { Harness, wf } from '../harness.ts';
import { PASS, PabcdDriver } from './support.ts';

const row = (m: PhaseMove | undefined) => m && `${m.from}>${m.to}:${m.reason}:${m.actor}`;

describe('phase moves by who made them', () => {
  it('Request changes at the check gate is a human move back to build', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    for (let i = 0; i < 4; i++) await d.finish({ did: 'ran', checkOutput: 'x', exitCode: 2 });
    await d.ok({ type: 'requestChanges', reason: 'fix the failing test' });
    expect(d.current).toBe('build');
    expect(row(d.run.pabcd!.moves.at(-1))).toBe('C>B:chat:human');
  });

  it('resuming a run its agent paused moves the phase on as a human', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('plan');
    await d.finish(PASS.plan, 'pause');
    expect(d.run.status).toBe('blocked');
    await d.ok({ type: 'resume' });
    expect(d.current).toBe('audit');
    expect(row(d.run.pabcd!.moves.at(-1))).toBe('P>A:chat:human');
  });

  it('a skip is a human move; the same command from the system is orchestrated', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('plan');
    await d.ok({ type: 'skip' });
    expect(row(d.run.pabcd!.moves.at(-1))).toBe('P>A:chat:human');
    await d.ok({ type: 'revert', toStepId: 'plan', source: 'file-edit' }, { id: 'system' });
    expect(row(d.run.pabcd!.moves.at(-1))).toBe('A>P:orchestrate:agent');
  });

  it('a skip across the interview gate is refused with that gate’s name', async () => {
    const d = new PabcdDriver();
    await d.start();
    const r = await d.send({ type: 'skip' });
    expect(r?.message).toMatch(/^interview gate I->P is closed: /);
  });

  it('a run rejected at a gate ends IDLE with the rejection as the evidence', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    for (let i = 0; i < 4; i++) await d.finish({ did: 'ran', checkOutput: 'x', exitCode: 2 });
    await d.ok({ type: 'answerCheckpoint', answer: 'reject', reason: 'abandon' });
    expect(d.run.status).toBe('failed');
    const last = d.run.pabcd!.moves.at(-1)!;
    expect(row(last)).toBe('C>IDLE:reset:human');
    expect(last.evidence).toBe(d.run.outcome?.reason);
    expect(last.evidence).toMatch(/abandon/);
  });

  it('an ungated move carries the attestation’s claim as evidence, and none when there is none', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('audit');
    expect(d.run.pabcd!.moves.at(-1)).toMatchObject({
      from: 'P',
      to: 'A',
      evidence: PASS.plan!.did,
    });
    await d.ok({ type: 'revert', toStepId: 'plan', source: 'command' });
    await d.ok({ type: 'skip' });
    const skipped = d.run.pabcd!.moves.at(-1)!;
    expect(row(skipped)).toBe('P>A:chat:human');
    expect(skipped).not.toHaveProperty('evidence');
  });

  it('an override of the check gate records no interview scan evidence', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    for (let i = 0; i < 4; i++) await d.finish({ did: 'ran', checkOutput: 'x', exitCode: 2 });
    await d.ok({ type: 'answerCheckpoint', answer: 'approve', reason: 'known flaky' });
    const last = d.run.pabcd!.moves.at(-1)!;
    expect(last).toMatchObject({ override: true, evidence: 'known flaky' });
    expect(last).not.toHaveProperty('scanEvidence');
  });

  it('a Stop block queues the next attempt of the step, with its timeout if it has one', async () => {
    const slow = {
      ...PABCD_WORKFLOW,
      steps: PABCD_WORKFLOW.steps.map((s) => (s.id === 'audit' ? { ...s, timeoutMs: 300_000 } : s)),
    };
    const held = async (workflow: typeof PABCD_WORKFLOW) => {
      const d = new PabcdDriver();
      await d.start(workflow);
      await d.passUntil('audit');
      await d.ok({ type: 'stepStarted', stepId: 'audit', attempt: 1 });
      const out = decide(d.run, {
        type: 'stepFinished',
        stepId: 'audit',
        attempt: 1,
        exitCode: 0,
        directive: { action: 'continue' },
        telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
        at: '2026-03-04T06:00:00.000Z',
        actor: { id: 'system' },
      });
      return out.ok ? out.effects : [];
    };
    expect(await held(slow)).toMatchObject([
      { type: 'enqueueStep', stepId: 'audit', attempt: 2, timeoutMs: 300_000 },
    ]);
    const [plain] = await held(PABCD_WORKFLOW);
    expect(plain).toMatchObject({ type: 'enqueueStep', stepId: 'audit', attempt: 2 });
    expect(plain).not.toHaveProperty('timeoutMs');
  });

  it('a native run whose steps are named like phases is neither held nor tracked', () => {
    const h = new Harness();
    h.start(
      wf('id: n\nsteps: [{ id: audit, agent: a, prompt: p }, { id: build, agent: b, prompt: q }]'),
    );
    h.finish();
    expect(h.current).toBe('build');
    expect(h.run.pabcd).toBeUndefined();
    expect(h.log.some((e) => e.type === 'phaseMoved' || e.type === 'phaseStopBlocked')).toBe(false);
  });
});
