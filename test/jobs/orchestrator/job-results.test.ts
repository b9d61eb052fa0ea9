/** Job signals → engine commands (pure), against states folded by the real engine. */
import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/engine/decide.ts';
import { evolve } from '../../../src/engine/evolve.ts';
import { type RunState, SYSTEM_ACTOR } from '../../../src/engine/model.ts';
import { DEMO_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';
import { jobOfEffect } from '../../../src/jobs/orchestrator/effects.ts';
import { parseQueueStepId } from '../../../src/jobs/orchestrator/job-payload.ts';
import {
  type JobRef,
  nativeMonitoringId,
  outcomeCommands,
  startedCommands,
} from '../../../src/jobs/orchestrator/job-results.ts';
import { interruptedCommands } from '../../../src/jobs/orchestrator/reconcile.ts';

const RUN = '2026-11-29T143000Z-demo';
const AT = '2026-11-29T14:30:00.000Z';

/** The demo run right after its start: plan queued (attempt 1). */
function started(): { state: RunState; effects: ReturnType<typeof decide> } {
  const d = decide(null, {
    type: 'start',
    runId: RUN,
    workflow: DEMO_WORKFLOW,
    workspace: '/ws',
    layout: 'native',
    spec: 'x',
    at: AT,
    actor: SYSTEM_ACTOR,
  });
  if (!d.ok) throw new Error(d.rejection.message);
  let state: RunState | null = null;
  for (const e of d.events) state = evolve(state, e);
  return { state: state!, effects: d };
}

const plan: JobRef = { id: `${RUN}:plan:1`, stepId: 'plan', attempt: 1, kind: 'step' };
const result = (over: Record<string, unknown> = {}) => ({
  ok: true,
  exitCode: 0,
  signal: null,
  timedOut: false,
  cancelled: false,
  directive: { action: 'continue' },
  telemetry: { tokensIn: 1, tokensOut: 2, cachedTokens: 0, costUsd: 0.01 },
  outputTail: [],
  durationMs: 5,
  sessionId: plan.id,
  logFile: '/ws/log',
  ...over,
});

describe('job results', () => {
  it('the start effect becomes a job with the step payload', () => {
    const { state, effects } = started();
    if (!effects.ok) throw new Error('start refused');
    const effect = effects.effects[0]!;
    if (effect.type !== 'enqueueStep') throw new Error('not an enqueue');
    const agent = {
      name: 'demo',
      engine: 'command' as const,
      argv: [],
      env: [],
      builtin: 'demo' as const,
    };
    const job = jobOfEffect(state, effect, { agent, workspace: { mode: 'shared', path: '/ws' } });
    expect(job).toEqual({
      spec: {
        runId: RUN,
        stepId: 'plan',
        attempt: 1,
        payload: {
          v: 2,
          kind: 'step',
          stepId: 'plan',
          workspace: { mode: 'shared', path: '/ws' },
          layout: 'native',
          agent,
          prompt: DEMO_WORKFLOW.steps[0]!.prompt,
        },
      },
      delayMs: 0,
    });
  });

  it('an unreported start comes before the result, with the job id as session', () => {
    const { state } = started();
    const cmds = outcomeCommands(state, plan, { ok: true, result: result() });
    expect(cmds.map((c) => c.key)).toEqual([
      `job:${plan.id}:started`,
      `job:${plan.id}:session`,
      `job:${plan.id}:finished`,
    ]);
    expect(cmds[1]!.command).toMatchObject({ sessionId: plan.id, monitoringId: 1 });
    expect(nativeMonitoringId(state)).toBe(1);
    expect(cmds[2]!.command).toMatchObject({ type: 'stepFinished', exitCode: 0 });
  });

  it("the engine's session id follows the job id under its own key, and wins at the end", () => {
    const { state } = started();
    const engine = { sessionId: 'claude-1', engine: true, monitoringId: 1 };
    let s = state;
    const apply = (cmds: ReturnType<typeof startedCommands>) => {
      for (const c of cmds) {
        const d = decide(s, { ...c.command, at: AT });
        if (!d.ok) throw new Error(d.rejection.message);
        for (const e of d.events) s = evolve(s, e);
      }
    };
    apply(startedCommands(s, plan, { sessionId: plan.id, monitoringId: 1 }));
    const second = startedCommands(s, plan, engine);
    expect(second.map((c) => c.key)).toEqual([`job:${plan.id}:engine-session`]);
    apply(second);
    expect(s.steps[0]!.sessionId).toBe('claude-1');
    // A late or redelivered start report does not put the job id back.
    expect(startedCommands(s, plan, { sessionId: plan.id, monitoringId: 1 })).toEqual([]);
    const done = outcomeCommands(s, plan, {
      ok: true,
      result: result({ engineSessionId: 'claude-1' }),
    });
    expect(done.map((c) => c.key)).toEqual([`job:${plan.id}:finished`]);
  });

  it('a session report before the start report starts the step with the engine id', () => {
    const { state } = started();
    const cmds = startedCommands(state, plan, { sessionId: 'claude-1', engine: true });
    expect(cmds.map((c) => c.key)).toEqual([
      `job:${plan.id}:started`,
      `job:${plan.id}:engine-session`,
    ]);
    // A lost session report: the result carries the engine's id.
    const done = outcomeCommands(state, plan, {
      ok: true,
      result: result({ engineSessionId: 'claude-1' }),
    });
    expect(done[1]).toMatchObject({
      key: `job:${plan.id}:engine-session`,
      command: { sessionId: 'claude-1' },
    });
  });

  it('failures carry their reason: agent failure, lost worker, unreadable result', () => {
    const { state } = started();
    const last = (o: Parameters<typeof outcomeCommands>[2]) =>
      outcomeCommands(state, plan, o).at(-1)!.command;
    expect(last({ ok: true, result: result({ ok: false, failure: 'exit code 3' }) })).toMatchObject(
      {
        type: 'stepFailed',
        error: 'exit code 3',
      },
    );
    expect(last({ ok: false, error: 'lost: died twice', lost: true })).toMatchObject({
      type: 'stepFailed',
      error: 'worker lost: lost: died twice',
    });
    expect(last({ ok: true, result: { nonsense: true } })).toMatchObject({
      type: 'stepFailed',
      error: 'the worker returned an unreadable result',
    });
  });

  it('reports about other attempts or triggers start nothing; a trigger result is triggerFinished', () => {
    const { state } = started();
    expect(startedCommands(state, { ...plan, attempt: 2 })).toEqual([]);
    const trigger: JobRef = {
      id: `${RUN}:plan+trigger:1`,
      stepId: 'plan',
      attempt: 1,
      kind: 'trigger',
    };
    expect(parseQueueStepId('plan+trigger')).toEqual({ stepId: 'plan', kind: 'trigger' });
    expect(outcomeCommands(state, trigger, { ok: false, error: 'boom' })).toEqual([
      {
        key: `job:${trigger.id}:finished`,
        command: expect.objectContaining({ type: 'triggerFinished', exitCode: -1, error: 'boom' }),
      },
    ]);
  });

  it('a vanished in-flight job is recovered once, under a recover: key', () => {
    const { state } = started();
    expect(interruptedCommands(state, plan)).toEqual([
      {
        key: `recover:${RUN}:plan:1`,
        command: { type: 'recoverInterrupted', actor: SYSTEM_ACTOR },
      },
    ]);
    expect(interruptedCommands(state, { ...plan, id: `${RUN}:plan:2`, attempt: 2 })).toEqual([]);
  });
});
