/**
 * Who a phase move is recorded as: a person's command from chat or the CLI is a human move, an
 * agent's report or a timer an orchestrated one, and the gate a refusal names is the gate in the
 * way (pure decide/evolve, codexclaw layout).
 */
import { describe, expect, it } from 'vitest';
import type { PhaseMove } from '../../../src/engine/pabcd/phases.ts';
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
});
