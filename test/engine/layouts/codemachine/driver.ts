/**
 * Test driver: runs engine commands with a fixed clock (one second per command from
 * 2026-01-02T03:04:00Z), through a real RunStore when given one (so layouts are written), else
 * straight through decide/evolve. Keeps the state and every event.
 */
import type { Command } from '../../../../src/engine/commands.ts';
import { decide } from '../../../../src/engine/decide.ts';
import type { RunEvent } from '../../../../src/engine/events.ts';
import { evolve } from '../../../../src/engine/evolve.ts';
import type { Actor, RunState, Telemetry, Workflow } from '../../../../src/engine/model.ts';
import type { RunStore } from '../../../../src/engine/store/run-store.ts';
import { parseWorkflow } from '../../../../src/engine/workflow/load.ts';

export const ALICE: Actor = { id: 'cli:alice', name: 'alice' };
export const RUN_ID = '2026-01-02T030400Z-golden';
export const NO_TOKENS: Telemetry = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 };

/** plan → build → audit (enterprise track only) → review (loops back to build once). */
export const GOLDEN_WORKFLOW: Workflow = parseWorkflow(
  `id: golden
tracks: [quick, enterprise]
conditions: [tests]
steps:
  - id: plan
    agent: planner
    prompt: Plan the change.
  - id: build
    agent: coder
    prompt: Build it.
    retries: { count: 1, backoff: 1s }
  - id: audit
    agent: auditor
    prompt: Audit it.
    tracks: [enterprise]
  - id: review
    agent: reviewer
    prompt: Review it.
    loop: { backTo: build, max: 1 }
`,
  { file: 'golden.workflow.yaml' },
);

/** Holds a run's state and applies commands to it, failing loudly on a rejection. */
export class Driver {
  state: RunState | null = null;
  readonly events: RunEvent[] = [];
  /** Events of the last command only. */
  last: RunEvent[] = [];
  #tick = 0;

  constructor(
    readonly workspace: string,
    readonly store?: RunStore,
  ) {}

  /** The next clock reading. */
  now(): string {
    const t = Date.UTC(2026, 0, 2, 3, 4, 0) + this.#tick++ * 1000;
    return new Date(t).toISOString();
  }

  /** Applies one command (its `at` and `actor` are filled in). */
  async send(command: DistributiveOmit<Command, 'at' | 'actor'>): Promise<RunState> {
    const full = { ...command, at: this.now(), actor: ALICE } as Command;
    if (this.store) {
      const r = await this.store.commit(RUN_ID, `key-${this.#tick}`, full);
      if (!r.ok) throw new Error(`${command.type} rejected: ${r.rejection.message}`);
      this.state = r.state;
      this.last = r.events;
    } else {
      const d = decide(this.state, full);
      if (!d.ok) throw new Error(`${command.type} rejected: ${d.rejection.message}`);
      let s = this.state;
      for (const e of d.events) s = evolve(s, e);
      this.state = s;
      this.last = d.events;
    }
    this.events.push(...this.last);
    return this.run;
  }

  /** The current state (throws before start). */
  get run(): RunState {
    if (!this.state) throw new Error('not started');
    return this.state;
  }

  /** Current attempt of a step. */
  attempt(stepId: string): number {
    return this.run.steps.find((s) => s.id === stepId)!.attempt;
  }

  start(extra: { selectedTrack?: string; selectedConditions?: string[] } = {}): Promise<RunState> {
    return this.send({
      type: 'start',
      runId: RUN_ID,
      workflow: GOLDEN_WORKFLOW,
      workspace: this.workspace,
      layout: 'codemachine',
      spec: '# Spec\n\nAdd a login page.\n',
      ...extra,
    });
  }

  started(stepId: string): Promise<RunState> {
    return this.send({ type: 'stepStarted', stepId, attempt: this.attempt(stepId) });
  }

  finished(
    stepId: string,
    directive: RunEventDirective = { action: 'continue' },
    telemetry = NO_TOKENS,
  ): Promise<RunState> {
    const attempt = this.attempt(stepId);
    return this.send({ type: 'stepFinished', stepId, attempt, exitCode: 0, directive, telemetry });
  }
}

type RunEventDirective = Extract<Command, { type: 'stepFinished' }>['directive'];
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
