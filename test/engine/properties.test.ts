/**
 * Property tests over random command sequences: whatever humans and workers send, in any order,
 * the engine's invariants hold.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Directive } from '../../src/engine/directive.ts';
import type { Effect, RunEvent } from '../../src/engine/events.ts';
import { evolve, replay } from '../../src/engine/evolve.ts';
import { isTerminal, type RunState, SYSTEM_ACTOR } from '../../src/engine/model.ts';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import type { Workflow } from '../../src/engine/workflow/types.ts';
import { ALICE, BOB, CAROL, Harness, type Input, T1, wf } from './harness.ts';

const RICH = wf(`
id: rich
tracks: [quick, full]
steps:
  - { id: plan, agent: a, prompt: p, checkpoint: { when: before, expiresIn: 1m, onExpiry: keep } }
  - { id: scaffold, agent: a, prompt: p, executeOnce: true, retries: { count: 1, backoff: 1s } }
  - { id: build, agent: a, prompt: p, retries: { count: 2, backoff: 500ms } }
  - { id: audit, agent: a, prompt: p, tracks: [full] }
  - id: review
    agent: a
    prompt: p
    loop: { backTo: scaffold, max: 2 }
    checkpoint: { when: after, approvals: 2, fourEyes: true, expiresIn: 2m, onExpiry: reject }
  - { id: ship, agent: a, prompt: p, loop: { backTo: build, max: 1 } }
`);

/** One of the keys of `weights`, drawn with those relative weights. */
function weighted<K extends string>(weights: Record<K, number>): fc.Arbitrary<K> {
  const entries = Object.entries(weights) as [K, number][];
  return fc.oneof(...entries.map(([k, weight]) => ({ arbitrary: fc.constant(k), weight })));
}

const DIRECTIVES: Record<string, Directive> = {
  continue: { action: 'continue' },
  loop: { action: 'loop' },
  checkpoint: { action: 'checkpoint', reason: 'look' },
  trigger: { action: 'trigger', triggerAgentId: 'helper' },
  stop: { action: 'stop' },
  error: { action: 'error' },
  pause: { action: 'pause' },
};

const directive = weighted({
  continue: 12,
  loop: 10,
  checkpoint: 2,
  trigger: 2,
  stop: 1,
  error: 1,
  pause: 2,
}).map((k) => DIRECTIVES[k]!);

/** An abstract move, made concrete against the current state (so sequences reach deep states). */
const move = fc.record({
  kind: weighted({
    auto: 30,
    finish: 8,
    start: 4,
    fail: 3,
    answer: 10,
    expire: 2,
    trigger: 4,
    skip: 2,
    pause: 2,
    resume: 3,
    retry: 3,
    revert: 2,
    reset: 1,
    recover: 2,
    cancel: 1,
    stale: 2,
  }),
  directive,
  actor: fc.constantFrom(ALICE, BOB, CAROL),
  answer: weighted({ approve: 6, loop: 3, reject: 1 }),
  pick: fc.nat(20),
  exitCode: weighted({ ok: 9, bad: 1 }).map((k) => (k === 'ok' ? 0 : 1)),
});

type Move = typeof move extends fc.Arbitrary<infer M> ? M : never;

/** The move a cooperative human or worker would make now: it carries runs deep. */
function sensible(m: Move, s: RunState): Input {
  const step = s.steps[s.cursor]!;
  if (s.status === 'awaiting')
    return { type: 'answerCheckpoint', answer: m.answer, actor: m.actor };
  if (s.status === 'blocked') {
    const kind = s.blocked?.kind;
    return { type: kind === 'paused' || kind === 'interrupted' ? 'resume' : 'retry' };
  }
  if (s.trigger) {
    return {
      type: 'triggerFinished',
      stepId: s.trigger.stepId,
      attempt: s.trigger.attempt,
      exitCode: 0,
    };
  }
  const loops = s.workflow.steps[s.cursor]?.loop !== undefined;
  const d = m.directive.action === 'loop' && !loops ? DIRECTIVES.continue! : m.directive;
  return {
    type: 'stepFinished',
    stepId: step.id,
    attempt: step.attempt,
    exitCode: 0,
    directive: d,
    telemetry: T1,
  };
}

function concrete(m: Move, s: RunState): Input {
  const step = s.steps[s.cursor]!;
  const attempt = step.attempt;
  switch (m.kind) {
    case 'auto':
      return sensible(m, s);
    case 'finish':
      return {
        type: 'stepFinished',
        stepId: step.id,
        attempt,
        exitCode: m.exitCode,
        directive: m.directive,
        telemetry: T1,
      };
    case 'start':
      return { type: 'stepStarted', stepId: step.id, attempt };
    case 'fail':
      return { type: 'stepFailed', stepId: step.id, attempt, error: 'boom' };
    case 'answer':
      return { type: 'answerCheckpoint', answer: m.answer, actor: m.actor };
    case 'expire':
      return {
        type: 'expireCheckpoint',
        checkpointId: s.checkpoint?.id ?? 'x:1',
        actor: SYSTEM_ACTOR,
        at: '2030-01-01T00:00:00.000Z',
      };
    case 'trigger':
      return {
        type: 'triggerFinished',
        stepId: s.trigger?.stepId ?? step.id,
        attempt: s.trigger?.attempt ?? 1,
        exitCode: m.exitCode,
      };
    case 'revert':
      return { type: 'revert', toStepId: s.steps[m.pick % s.steps.length]!.id, source: 'command' };
    case 'recover':
      return { type: 'recoverInterrupted' };
    case 'stale':
      return {
        type: 'stepFinished',
        stepId: step.id,
        attempt: attempt - 1,
        exitCode: 0,
        directive: m.directive,
        telemetry: T1,
      };
    case 'reset':
      return { type: 'reset', source: 'file-edit' };
    default:
      return { type: m.kind };
  }
}

interface Trace {
  h: Harness;
  states: RunState[];
  effects: Effect[];
}

function drive(workflow: Workflow, moves: Move[], track?: string): Trace {
  const h = new Harness();
  h.start(workflow, track ? { selectedTrack: track } : {});
  const states = [h.run];
  const effects: Effect[] = [];
  for (const m of moves) {
    const before = h.run;
    const d = h.send(concrete(m, before));
    if (d.ok) effects.push(...d.effects);
    else expect(h.run).toBe(before);
    states.push(h.run);
  }
  return { h, states, effects };
}

const scenario = fc.record({
  workflow: fc.constantFrom(DEMO_WORKFLOW, RICH),
  track: fc.constantFrom('quick', 'full'),
  moves: fc.array(move, { minLength: 5, maxLength: 60 }),
});

function run(sc: { workflow: Workflow; track: string; moves: Move[] }): Trace {
  return drive(sc.workflow, sc.moves, sc.workflow === RICH ? sc.track : undefined);
}

const PARAMS = { numRuns: 200 };

describe('engine invariants over random command sequences', () => {
  it('a terminal state never changes', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const { states } = run(sc);
        const end = states.findIndex((s) => isTerminal(s.status));
        if (end < 0) return;
        for (const s of states.slice(end)) expect(s).toBe(states[end]);
      }),
      PARAMS,
    );
  });

  it('a checkpoint resolves at most once, and takes no vote after that', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const { h } = run(sc);
        const closed = new Set<string>();
        for (const e of h.log as RunEvent[]) {
          if (e.type === 'checkpointVoted') expect(closed.has(e.checkpointId)).toBe(false);
          if (e.type === 'checkpointResolved' || e.type === 'checkpointWithdrawn') {
            expect(closed.has(e.checkpointId)).toBe(false);
            closed.add(e.checkpointId);
          }
        }
        const ids = h.run.checkpoints.map((c) => c.id);
        expect(new Set(ids).size).toBe(ids.length);
      }),
      PARAMS,
    );
  });

  it('loop counters never pass max', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        for (const s of run(sc).states) {
          for (const [stepId, n] of Object.entries(s.loopCounters)) {
            const max = s.workflow.steps.find((x) => x.id === stepId)?.loop?.max ?? 0;
            expect(n).toBeLessThanOrEqual(max);
          }
        }
      }),
      PARAMS,
    );
  });

  it('replay(events) equals the folded state, also after a JSON round trip', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const { h } = run(sc);
        expect(replay(h.log)).toStrictEqual(h.state);
        expect(replay(JSON.parse(JSON.stringify(h.log)))).toStrictEqual(
          JSON.parse(JSON.stringify(h.state)),
        );
      }),
      PARAMS,
    );
  });

  it('evolve never mutates its input', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const { h } = run(sc);
        let state: RunState | null = null;
        for (const e of h.log) {
          const snapshot = structuredClone(state);
          const frozenEvent = structuredClone(e);
          const next = evolve(state, e);
          expect(state).toStrictEqual(snapshot);
          expect(e).toStrictEqual(frozenEvent);
          state = next;
        }
      }),
      PARAMS,
    );
  });

  it('a job id (run:step:attempt) is never enqueued twice', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        const ids = run(sc)
          .effects.filter((e) => e.type === 'enqueueStep' || e.type === 'enqueueTrigger')
          .map((e) => `${e.type}:${e.stepId}:${e.attempt}`);
        expect(new Set(ids).size).toBe(ids.length);
      }),
      PARAMS,
    );
  });

  it('status and open checkpoint agree: awaiting exactly when a checkpoint is open', () => {
    fc.assert(
      fc.property(scenario, (sc) => {
        for (const s of run(sc).states) {
          if (isTerminal(s.status)) continue;
          expect(s.status === 'awaiting').toBe(s.checkpoint !== null);
          expect(s.status === 'blocked').toBe(s.blocked !== undefined);
        }
      }),
      PARAMS,
    );
  });
});
