/**
 * decide() itself: what it checks before any rule (a run's layout at start, a run whose ledger is
 * corrupt) and after them (the layout's law over the commit), and that a refusal leaves the run
 * as it was.
 */
import { describe, expect, it } from 'vitest';
import { decide } from '../../src/engine/decide.ts';
import { evolve } from '../../src/engine/evolve.ts';
import { PABCD_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { BOB, Harness, RUN_ID, wf } from './harness.ts';

/** The coordinator's session without its tasks step: every state in the seed's order. */
const SESSION = wf(`
id: session
steps:
  - { id: discover, agent: demo, prompt: discover }
  - { id: plan, agent: demo, prompt: plan }
  - { id: execute, agent: demo, prompt: execute }
  - { id: verify, agent: demo, prompt: verify }
  - { id: summarize, agent: demo, prompt: summarize }
`);

describe('decide', () => {
  it('refuses to start a coordinator run whose steps leave the seed’s state machine', () => {
    const h = new Harness();
    const noPlan = wf(`
id: no-plan
steps:
  - { id: discover, agent: demo, prompt: discover }
  - { id: verify, agent: demo, prompt: verify }
`);
    expect(
      h.rejected({
        type: 'start',
        runId: RUN_ID,
        workflow: noPlan,
        workspace: '/tmp/ws',
        layout: 'coordinator',
        spec: 's',
      }),
    ).toEqual({
      code: 'INVALID_INPUT',
      message:
        'coordinator layout: step verify would make DISCOVERING → VERIFYING is not a coordinator transition (from DISCOVERING: PLANNING)',
    });
    expect(h.state).toBeNull();
    h.start(SESSION, { layout: 'coordinator' });
    expect(h.current).toBe('discover');
  });

  it('refuses a command whose commit would break the layout’s law, and keeps the run as it was', () => {
    const h = new Harness();
    h.start(SESSION, { layout: 'coordinator' });
    for (const id of ['discover', 'plan', 'execute']) {
      expect(h.current).toBe(id);
      h.finish();
    }
    expect(h.current).toBe('verify');
    const refused = h.rejected({
      type: 'revert',
      toStepId: 'discover',
      source: 'command',
      actor: BOB,
    });
    expect(refused.message).toBe(
      "refused by the coordinator's state machine: VERIFYING → DISCOVERING is not a coordinator transition (from VERIFYING: SUMMARIZING)",
    );
    // The same revert is fine under the native layout, which has no such law.
    const native = new Harness();
    native.start(SESSION);
    for (let i = 0; i < 3; i++) native.finish();
    native.ok({ type: 'revert', toStepId: 'discover', source: 'command', actor: BOB });
    expect(native.current).toBe('discover');
  });

  it('a run whose ledger is corrupt takes no command until it is repaired', () => {
    const h = new Harness();
    h.start(SESSION);
    const corrupt = evolve(h.run, {
      type: 'runBlocked',
      at: h.now(),
      kind: 'corrupt',
      reason: 'line 7 does not parse',
    });
    for (const command of [
      { type: 'pause', actor: BOB, at: h.now() },
      { type: 'stepStarted', stepId: 'discover', attempt: 1, actor: BOB, at: h.now() },
    ] as const) {
      expect(decide(corrupt, command)).toEqual({
        ok: false,
        rejection: {
          code: 'ILLEGAL_TRANSITION',
          message: `run ${RUN_ID} is blocked: line 7 does not parse; repair its ledger first`,
        },
      });
    }
    // Blocked for another reason, the same run still answers.
    const paused = evolve(h.run, { type: 'runBlocked', at: h.now(), kind: 'paused', reason: 'p' });
    expect(decide(paused, { type: 'resume', actor: BOB, at: h.now() }).ok).toBe(true);
  });

  it('runs of every layout start and take commands, whatever rules their layout has', () => {
    for (const layout of ['flow', 'codexclaw', 'codemachine'] as const) {
      const h = new Harness();
      h.start(layout === 'codexclaw' ? PABCD_WORKFLOW : SESSION, { layout });
      h.ok({ type: 'pause', actor: BOB });
      expect(h.run.status).toBe('blocked');
    }
  });

  it('a codexclaw run records its phase from the start', () => {
    const h = new Harness();
    h.start(PABCD_WORKFLOW, { layout: 'codexclaw' });
    expect(h.run.pabcd?.moves.map((m) => `${m.from}>${m.to}`)).toEqual(['IDLE>I']);
    h.ok({ type: 'skip', stepId: 'plan', ahead: true, actor: BOB });
    h.ok({ type: 'revert', toStepId: 'interview', source: 'command', actor: BOB });
    expect(h.run.pabcd?.moves.map((m) => `${m.from}>${m.to}`)).toEqual(['IDLE>I']);
    h.ok({ type: 'cancel', actor: BOB });
    expect(h.run.pabcd?.moves.map((m) => `${m.from}>${m.to}`)).toEqual(['IDLE>I', 'I>IDLE']);
  });

  it('a state it cannot read is an error, not a refusal', () => {
    const h = new Harness();
    h.start(SESSION);
    const broken = { ...h.run, cursor: 99 };
    expect(() => decide(broken, { type: 'skip', actor: BOB, at: h.now() })).toThrow(TypeError);
  });
});
