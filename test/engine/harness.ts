/**
 * Test harness for the pure engine: sends commands through decide(), folds accepted events with
 * evolve(), and keeps the log so tests can compare replay() with the folded state.
 */
import { expect } from 'vitest';
import type { Command } from '../../src/engine/commands.ts';
import { decide } from '../../src/engine/decide.ts';
import type { Directive } from '../../src/engine/directive.ts';
import type { Decision, Effect, Rejection, RunEvent } from '../../src/engine/events.ts';
import { evolve } from '../../src/engine/evolve.ts';
import type { Actor, RunState, StepState, Telemetry } from '../../src/engine/model.ts';
import { parseWorkflow } from '../../src/engine/workflow/load.ts';
import type { Workflow } from '../../src/engine/workflow/types.ts';

/** A command without the fields the harness fills in (time; actor defaults to the starter). */
export type Input = Command extends infer C
  ? C extends Command
    ? Omit<C, 'at' | 'actor'> & { actor?: Actor; at?: string }
    : never
  : never;

export const ALICE: Actor = { id: 'telegram:1', name: 'Alice' };
export const BOB: Actor = { id: 'telegram:2', name: 'Bob' };
export const CAROL: Actor = { id: 'slack:T1:U3', name: 'Carol' };
export const RUN_ID = '2026-11-29T143000Z-test-run';
export const T1: Telemetry = { tokensIn: 10, tokensOut: 5, cachedTokens: 2, costUsd: 0.5 };
export const BASE_TIME = Date.parse('2026-11-29T14:30:00.000Z');

/** Parses workflow YAML written inline in a test. */
export function wf(yaml: string): Workflow {
  return parseWorkflow(yaml, { file: 'test.workflow.yaml' });
}

/** Drives one run. Time advances one second per command. */
export class Harness {
  state: RunState | null = null;
  readonly log: RunEvent[] = [];
  private tick = 0;

  /** Time of the next command. */
  now(): string {
    return new Date(BASE_TIME + this.tick * 1000).toISOString();
  }

  /** Moves the clock forward by `ms` milliseconds. */
  advance(ms: number): void {
    this.tick += ms / 1000;
  }

  /** Sends a command; on success folds its events. */
  send(input: Input): Decision {
    const command = { actor: ALICE, at: this.now(), ...input } as Command;
    this.tick += 1;
    const decision = decide(this.state, command);
    if (decision.ok) {
      for (const e of decision.events) this.state = evolve(this.state, e);
      this.log.push(...decision.events);
    }
    return decision;
  }

  /** Sends a command that must be accepted; returns its events and effects. */
  ok(input: Input): { events: RunEvent[]; effects: Effect[]; types: string[] } {
    const d = this.send(input);
    if (!d.ok) throw new Error(`${input.type} rejected: ${d.rejection.message}`);
    return { events: d.events, effects: d.effects, types: d.events.map((e) => e.type) };
  }

  /** Sends a command that must be refused; returns the rejection. */
  rejected(input: Input): Rejection {
    const before = this.state;
    const d = this.send(input);
    if (d.ok) throw new Error(`${input.type} was accepted: ${d.events.map((e) => e.type)}`);
    expect(this.state).toBe(before);
    return d.rejection;
  }

  /** Starts a run of `workflow` as Alice. */
  start(workflow: Workflow, extra: Partial<Omit<Input & { type: 'start' }, 'type'>> = {}) {
    return this.ok({
      type: 'start',
      runId: RUN_ID,
      workflow,
      workspace: '/tmp/ws',
      layout: 'native',
      spec: 'Add a login page.',
      ...extra,
    });
  }

  /** The run state (asserting it exists). */
  get run(): RunState {
    if (!this.state) throw new Error('no run');
    return this.state;
  }

  /** The step with this id. */
  step(id: string): StepState {
    const s = this.run.steps.find((x) => x.id === id);
    if (!s) throw new Error(`no step ${id}`);
    return s;
  }

  /** The id of the current step. */
  get current(): string {
    return this.run.steps[this.run.cursor]!.id;
  }

  /** The current step starts and finishes with `directive` (exit 0). */
  finish(directive: Directive = { action: 'continue' }, stepId = this.current) {
    const attempt = this.step(stepId).attempt;
    if (this.step(stepId).status === 'queued') this.ok({ type: 'stepStarted', stepId, attempt });
    return this.ok({
      type: 'stepFinished',
      stepId,
      attempt,
      exitCode: 0,
      directive,
      telemetry: T1,
    });
  }

  /** The current step's attempt fails with `error`. */
  fail(error = 'boom', stepId = this.current) {
    const attempt = this.step(stepId).attempt;
    return this.ok({ type: 'stepFailed', stepId, attempt, error });
  }
}
