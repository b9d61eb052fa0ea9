/** The PABCD rules as the engine enforces them on codexclaw-layout runs (pure decide/evolve). */
import { describe, expect, it } from 'vitest';
import type { PhaseMove } from '../../../src/engine/pabcd/phases.ts';
import { DEMO_WORKFLOW, PABCD_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';
import { PASS, PabcdDriver } from './support.ts';

const moves = (d: PabcdDriver) =>
  d.run.pabcd!.moves.map((m: PhaseMove) => `${m.from}>${m.to}:${m.reason}:${m.actor}`);

describe('pabcd preset', () => {
  it('is I, P, A, B, C, D on the codexclaw layout', () => {
    expect(PABCD_WORKFLOW.id).toBe('pabcd');
    expect(PABCD_WORKFLOW.layout).toBe('codexclaw');
    expect(PABCD_WORKFLOW.steps.map((s) => s.id)).toEqual([
      'interview',
      'plan',
      'audit',
      'build',
      'check',
      'done',
    ]);
  });

  it('runs the cycle with attestations; done closes C→IDLE once and resets the flags', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('done');
    expect(d.run.pabcd!.phase).toBe('D');
    await d.finish();
    expect(d.run.status).toBe('completed');
    expect(moves(d)).toEqual([
      'IDLE>I:chat:human',
      'I>P:orchestrate:agent',
      'P>A:orchestrate:agent',
      'A>B:orchestrate:agent',
      'B>C:orchestrate:agent',
      'C>IDLE:done:agent',
    ]);
    expect(d.run.pabcd!.moves[3]!.evidence).toBe('reviewer read the plan');
    expect(d.run.pabcd!.flags).toEqual({
      interview: false,
      auditPassed: false,
      checkPassed: false,
    });
  });

  it('refuses a codexclaw-layout workflow whose steps are not phases', async () => {
    const d = new PabcdDriver();
    const r = await d.send({
      type: 'start',
      runId: '2026-03-04T050600Z-pabcd',
      workflow: DEMO_WORKFLOW,
      workspace: '/tmp/x',
      layout: 'codexclaw',
      spec: '',
    });
    expect(r?.message).toMatch(/step plan cannot follow|not a PABCD phase|illegal transition/);
  });
});

describe('moves', () => {
  it('refuses an illegal revert C→A and allows C→B', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    const r = await d.send({ type: 'revert', toStepId: 'audit', source: 'command' });
    expect(r?.message).toBe('illegal transition C->A');
    await d.ok({ type: 'revert', toStepId: 'build', source: 'command' });
    expect(d.run.pabcd!.phase).toBe('B');
    expect(moves(d).at(-1)).toBe('C>B:chat:human');
    expect(d.run.pabcd!.moves.at(-1)!.by).toEqual({ id: 'telegram:1', name: 'Alice' });
  });

  it('entering I clears the flags', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('build');
    expect(d.run.pabcd!.flags.auditPassed).toBe(true);
    await d.ok({ type: 'revert', toStepId: 'interview', source: 'command' });
    expect(d.run.pabcd!.flags).toEqual({
      interview: false,
      auditPassed: false,
      checkPassed: false,
    });
  });

  it('a reset writes reason reset, then starts the cycle again', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('build');
    await d.ok({ type: 'reset', source: 'command' });
    expect(moves(d).slice(-2)).toEqual(['B>IDLE:reset:human', 'IDLE>I:chat:human']);
  });

  it('a cancel leaves the session IDLE with a reset row carrying the reason', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.ok({ type: 'cancel', reason: 'wrong spec' });
    const last = d.run.pabcd!.moves.at(-1)!;
    expect([last.from, last.to, last.reason]).toEqual(['I', 'IDLE', 'reset']);
    expect(last.evidence).toMatch(/wrong spec/);
  });

  it('refuses a skip across a closed gate', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('audit');
    const r = await d.send({ type: 'skip' });
    expect(r?.message).toMatch(/audit gate A->B is closed/);
  });
});

describe('gates', () => {
  it('a closed gate sends the agent back at most 3 times, then opens a gate checkpoint', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('audit');
    const fail = { did: 'reviewed', auditOutput: 'two blockers', verdict: 'fail' as const };
    for (let i = 1; i <= 3; i++) {
      await d.finish(fail);
      expect(d.current).toBe('audit');
      expect(d.run.pabcd).toMatchObject({ stopBlockPhase: 'A', stopBlockCount: i });
      expect(d.run.checkpoint).toBeNull();
    }
    await d.finish(fail);
    expect(d.run.status).toBe('awaiting');
    expect(d.run.checkpoint).toMatchObject({
      gate: 'auditPassed',
      answers: ['approve', 'reject', 'loop'],
    });
    expect(d.run.checkpoint!.reason).toMatch(/audit gate A→B is closed: the audit verdict is fail/);
  });

  it('approving a gate is an override: a reason is required and recorded as evidence', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    for (let i = 0; i < 4; i++)
      await d.finish({ did: 'ran tests', checkOutput: '1 failed', exitCode: 1 });
    const refused = await d.send({ type: 'answerCheckpoint', answer: 'approve' });
    expect(refused?.message).toMatch(/overrides a closed gate: give a reason/);
    await d.ok({
      type: 'answerCheckpoint',
      answer: 'approve',
      reason: 'flaky test, tracked in #12',
    });
    const last = d.run.pabcd!.moves.at(-1)!;
    expect(last).toMatchObject({ from: 'C', to: 'IDLE', reason: 'done', override: true });
    expect(last.evidence).toBe('flaky test, tracked in #12');
    expect(d.run.pabcd!.stopBlockCount).toBe(0);
  });

  it('the interview override records scan evidence', async () => {
    const d = new PabcdDriver();
    await d.start();
    const unready = { did: 'asked questions', scanRounds: 1, highContradictionCount: 2 };
    for (let i = 0; i < 4; i++) await d.finish(unready);
    await d.ok({
      type: 'answerCheckpoint',
      answer: 'approve',
      reason: 'the user accepts the risk',
    });
    expect(d.run.pabcd!.moves.at(-1)).toMatchObject({
      from: 'I',
      to: 'P',
      actor: 'human',
      reason: 'chat',
      override: true,
      scanEvidence: { scanRounds: 1, highContradictionCount: 2 },
    });
  });

  it('request changes at the check gate goes back to build (C→B)', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    for (let i = 0; i < 4; i++) await d.finish({ did: 'ran', checkOutput: 'x', exitCode: 2 });
    await d.ok({ type: 'answerCheckpoint', answer: 'loop', reason: 'fix the failing test' });
    expect(d.current).toBe('build');
    expect(moves(d).at(-1)).toBe('C>B:chat:human');
  });

  it('the gate reason reaches the agent when it is sent back', async () => {
    const d = new PabcdDriver();
    await d.start();
    await d.passUntil('check');
    const stepId = 'check';
    const attempt = d.run.steps[4]!.attempt;
    await d.ok({ type: 'stepStarted', stepId, attempt });
    const { decide } = await import('../../../src/engine/decide.ts');
    const out = decide(d.run, {
      type: 'stepFinished',
      stepId,
      attempt,
      exitCode: 0,
      directive: { action: 'continue' },
      telemetry: { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
      at: '2026-03-04T06:00:00.000Z',
      actor: { id: 'system' },
    });
    expect(out.ok && out.effects[0]).toMatchObject({ type: 'enqueueStep', stepId: 'check' });
    expect(out.ok && out.effects[0]?.type === 'enqueueStep' && out.effects[0].prompt).toMatch(
      /check gate C→D is closed: the attestation needs "did"/,
    );
    expect(PASS.check!.exitCode).toBe(0);
  });
});
