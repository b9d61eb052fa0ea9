/** Real run states for renderer tests, made by the pure engine (decide + evolve) on the demo workflow. */
import type { Command } from '../../../src/engine/commands.ts';
import { decide } from '../../../src/engine/decide.ts';
import type { RunEvent } from '../../../src/engine/events.ts';
import { evolve } from '../../../src/engine/evolve.ts';
import type { RunState } from '../../../src/engine/model.ts';
import { DEMO_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';

/** The run id every state here has. */
export const RUN_ID = '2026-11-29T143000Z-add-login';

const ALICE = { id: 'cli:alice' };
const WORKER = { id: 'system' };
const TELEMETRY = { tokensIn: 1500, tokensOut: 250, cachedTokens: 1024, costUsd: 0.0123 };

/** A run state and the events of the last command applied to it. */
export interface Step {
  state: RunState;
  events: RunEvent[];
}

/** Applies `command` (at second `t` after the start) to `state`; throws when refused. */
export function apply(state: RunState | null, command: Omit<Command, 'at'>, t = 0): Step {
  const at = new Date(Date.parse('2026-11-29T14:30:00.000Z') + t * 1000).toISOString();
  const decision = decide(state, { ...command, at } as Command);
  if (!decision.ok) throw new Error(decision.rejection.message);
  let next = state;
  for (const e of decision.events) next = evolve(next, e);
  return { state: next!, events: decision.events };
}

/** The demo run just started: plan queued. */
export function started(): Step {
  return apply(null, {
    type: 'start',
    actor: ALICE,
    runId: RUN_ID,
    workflow: DEMO_WORKFLOW,
    workspace: '/tmp/ws',
    layout: 'native',
    spec: 'add login',
  } as Omit<Command, 'at'>);
}

/** The current step started (t) and finished (t + 2 s) with `directive`. */
export function runCurrentStep(state: RunState, t: number, action = 'continue'): Step {
  const step = state.steps[state.cursor]!;
  const s1 = apply(
    state,
    { type: 'stepStarted', actor: WORKER, stepId: step.id, attempt: step.attempt } as Omit<
      Command,
      'at'
    >,
    t,
  );
  const s2 = apply(
    s1.state,
    {
      type: 'stepFinished',
      actor: WORKER,
      stepId: step.id,
      attempt: step.attempt,
      exitCode: 0,
      directive: { action },
      telemetry: TELEMETRY,
    } as Omit<Command, 'at'>,
    t + 2,
  );
  return { state: s2.state, events: [...s1.events, ...s2.events] };
}

/** Approves the open checkpoint as `telegram:42`. */
export function approve(state: RunState, t: number): Step {
  return apply(
    state,
    { type: 'answerCheckpoint', actor: { id: 'telegram:42' }, answer: 'approve' } as Omit<
      Command,
      'at'
    >,
    t,
  );
}

/** The demo run awaiting approval of plan. */
export function awaitingPlan(): Step {
  return runCurrentStep(started().state, 1);
}

/** The demo run completed: both checkpoints approved. */
export function completed(): RunState {
  let s = awaitingPlan().state;
  s = approve(s, 4).state;
  s = runCurrentStep(s, 5).state;
  s = runCurrentStep(s, 8).state;
  return approve(s, 11).state;
}

/** The demo run blocked: build failed with no retries left. */
export function blockedOnBuild(): RunState {
  let s = approve(awaitingPlan().state, 4).state;
  s = apply(
    s,
    { type: 'stepStarted', actor: WORKER, stepId: 'build', attempt: 1 } as Omit<Command, 'at'>,
    5,
  ).state;
  return apply(
    s,
    {
      type: 'stepFailed',
      actor: WORKER,
      stepId: 'build',
      attempt: 1,
      error: 'exit code 3',
    } as Omit<Command, 'at'>,
    6,
  ).state;
}
