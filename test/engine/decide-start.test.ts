import { describe, expect, it } from 'vitest';
import { decide } from '../../src/engine/decide.ts';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { ALICE, Harness, RUN_ID, wf } from './harness.ts';

const TRACKED = wf(`
id: tracked
tracks: [quick, enterprise]
conditions: [docs, tests]
steps:
  - { id: plan, agent: a, prompt: p }
  - { id: audit, agent: a, prompt: p, tracks: [enterprise] }
  - { id: write-docs, agent: a, prompt: p, conditions: [docs] }
  - { id: both, agent: a, prompt: p, conditions: [docs, tests] }
  - { id: ship, agent: a, prompt: p }
`);

describe('start', () => {
  it('creates an active run and queues the first step as attempt 1', () => {
    const h = new Harness();
    const { types, effects } = h.start(DEMO_WORKFLOW);
    expect(types).toEqual(['runStarted', 'stepQueued']);
    expect(effects).toEqual([
      {
        type: 'enqueueStep',
        runId: RUN_ID,
        stepId: 'plan',
        attempt: 1,
        agent: 'demo',
        prompt: DEMO_WORKFLOW.steps[0]!.prompt,
        delayMs: 0,
      },
    ]);
    expect(h.run).toMatchObject({
      id: RUN_ID,
      status: 'active',
      cursor: 0,
      startedBy: ALICE,
      resumeFromLastStep: true,
      selectedConditions: [],
      workflow: DEMO_WORKFLOW,
    });
    expect(h.step('plan')).toMatchObject({ status: 'queued', attempt: 1, tries: 1 });
  });

  it('passes the step timeout to the job', () => {
    const h = new Harness();
    const { effects } = h.start(wf('id: t\nsteps: [{ id: s, agent: a, prompt: p, timeout: 30m }]'));
    expect(effects[0]).toMatchObject({ type: 'enqueueStep', timeoutMs: 1_800_000 });
  });

  it('refuses a second start of the same run', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW);
    expect(
      h.rejected({
        type: 'start',
        runId: RUN_ID,
        workflow: DEMO_WORKFLOW,
        workspace: '/w',
        layout: 'native',
        spec: '',
      }),
    ).toEqual({ code: 'ILLEGAL_TRANSITION', message: `run ${RUN_ID} already exists` });
  });

  it('refuses any other command for a run that does not exist', () => {
    const d = decide(null, { type: 'resume', at: '2026-01-01T00:00:00Z', actor: ALICE });
    expect(d).toEqual({
      ok: false,
      rejection: { code: 'NOT_FOUND', message: 'no such run (command resume)' },
    });
  });

  it('refuses a run id that is not in the flow format (no path tricks)', () => {
    const h = new Harness();
    const r = h.rejected({
      type: 'start',
      runId: '../etc',
      workflow: DEMO_WORKFLOW,
      workspace: '/w',
      layout: 'native',
      spec: '',
    });
    expect(r.code).toBe('INVALID_INPUT');
    expect(r.message).toContain('run id "../etc" must match');
  });

  it('refuses a command time that is not a date', () => {
    const h = new Harness();
    const r = h.rejected({
      type: 'start',
      at: 'yesterday',
      runId: RUN_ID,
      workflow: DEMO_WORKFLOW,
      workspace: '/w',
      layout: 'native',
      spec: '',
    });
    expect(r).toEqual({
      code: 'INVALID_INPUT',
      message: 'command time "yesterday" is not an ISO date',
    });
  });

  it('refuses an unknown track or condition', () => {
    const h = new Harness();
    expect(
      h.rejected({
        type: 'start',
        runId: RUN_ID,
        workflow: TRACKED,
        workspace: '/w',
        layout: 'native',
        spec: '',
        selectedTrack: 'fast',
      }).message,
    ).toBe('unknown track "fast" (workflow tracked has: quick, enterprise)');
    expect(
      h.rejected({
        type: 'start',
        runId: RUN_ID,
        workflow: TRACKED,
        workspace: '/w',
        layout: 'native',
        spec: '',
        selectedConditions: ['docs', 'perf'],
      }).message,
    ).toBe('unknown condition(s) perf (workflow tracked has: docs, tests)');
  });

  it('marks steps outside the selected track/conditions as excluded and passes over them', () => {
    const h = new Harness();
    h.start(TRACKED, { selectedTrack: 'quick', selectedConditions: ['docs'] });
    expect(h.run.selectedTrack).toBe('quick');
    expect(h.run.steps.map((s) => [s.id, s.status, s.excluded ?? false])).toEqual([
      ['plan', 'queued', false],
      ['audit', 'skipped', true],
      ['write-docs', 'pending', false],
      ['both', 'skipped', true],
      ['ship', 'pending', false],
    ]);
    h.finish();
    expect(h.current).toBe('write-docs');
    h.finish();
    expect(h.current).toBe('ship');
    h.finish();
    expect(h.run.status).toBe('completed');
    expect(h.step('audit').attempt).toBe(0);
  });

  it('runs a track-only step when its track is selected', () => {
    const h = new Harness();
    h.start(TRACKED, { selectedTrack: 'enterprise', selectedConditions: ['docs', 'tests'] });
    expect(h.run.steps.every((s) => !s.excluded)).toBe(true);
    h.finish();
    expect(h.current).toBe('audit');
  });

  it('refuses a selection under which no step runs', () => {
    const h = new Harness();
    const only = wf('id: o\ntracks: [a, b]\nsteps: [{ id: s, agent: x, prompt: p, tracks: [a] }]');
    expect(
      h.rejected({
        type: 'start',
        runId: RUN_ID,
        workflow: only,
        workspace: '/w',
        layout: 'native',
        spec: '',
        selectedTrack: 'b',
      }).message,
    ).toBe('no step of workflow o applies to the selected track/conditions');
  });

  it('refuses a hand-built workflow whose loop or ids it could not follow', () => {
    const h = new Harness();
    const base = {
      type: 'start',
      runId: RUN_ID,
      workspace: '/w',
      layout: 'native',
      spec: '',
    } as const;
    const s = { agent: 'a', prompt: 'p' };
    const looped = {
      id: 'w',
      version: 'v',
      steps: [
        { id: 'a', ...s, loop: { backTo: 'b', max: 1 } },
        { id: 'b', ...s },
      ],
    };
    expect(h.rejected({ ...base, workflow: looped }).message).toBe(
      'workflow w: step a loops back to b, not an earlier step',
    );
    const dup = {
      id: 'w',
      version: 'v',
      steps: [
        { id: 'a', ...s },
        { id: 'a', ...s },
      ],
    };
    expect(h.rejected({ ...base, workflow: dup }).message).toBe('workflow w: duplicate step id a');
  });

  it('keeps resumeFromLastStep as given', () => {
    const h = new Harness();
    h.start(DEMO_WORKFLOW, { resumeFromLastStep: false, layout: 'codemachine' });
    expect(h.run.resumeFromLastStep).toBe(false);
    expect(h.run.layout).toBe('codemachine');
  });
});
