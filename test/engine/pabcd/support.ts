/**
 * Drives pabcd runs with a fixed clock (one second per command from 2026-03-04T05:06:00Z),
 * through a real RunStore writing the codexclaw layout when given a workspace, else straight
 * through decide/evolve.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from '../../../src/engine/commands.ts';
import { decide } from '../../../src/engine/decide.ts';
import type { Directive } from '../../../src/engine/directive.ts';
import type { Rejection, RunEvent } from '../../../src/engine/events.ts';
import { evolve } from '../../../src/engine/evolve.ts';
import { codexclawLayout } from '../../../src/engine/layouts/codexclaw/index.ts';
import type { Actor, RunState, Workflow } from '../../../src/engine/model.ts';
import type { Attestation } from '../../../src/engine/pabcd/attest.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { PABCD_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';

export const ALICE: Actor = { id: 'telegram:1', name: 'Alice' };
export const RUN_ID = '2026-03-04T050600Z-pabcd';
const T0 = Date.UTC(2026, 2, 4, 5, 6, 0);
const NO_TOKENS = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 };

/** Attestations that pass each gate. */
export const PASS: Readonly<Record<string, Attestation>> = Object.freeze({
  interview: { did: 'listed 4 requirements', scanRounds: 2, highContradictionCount: 0 },
  plan: { did: 'plan with files and acceptance criteria' },
  audit: { did: 'reviewer read the plan', auditOutput: 'LGTM, no blockers', verdict: 'pass' },
  build: { did: 'implemented the login page' },
  check: { did: 'ran the tests', checkOutput: '42 passed', exitCode: 0 },
  done: { did: 'summarised' },
});

type Input = Command extends infer C
  ? C extends Command
    ? Omit<C, 'at' | 'actor'>
    : never
  : never;

/** Holds one run; every command is one second after the previous one. */
export class PabcdDriver {
  state: RunState | null = null;
  readonly events: RunEvent[] = [];
  #tick = 0;
  #key = 0;

  constructor(
    readonly workspace = '/tmp/pabcd-ws',
    readonly store?: RunStore,
  ) {}

  /** Sends a command; returns the rejection, or null when it was accepted. */
  async send(input: Input, actor: Actor = ALICE): Promise<Rejection | null> {
    const at = new Date(T0 + this.#tick++ * 1000).toISOString();
    const command = { ...input, at, actor } as Command;
    if (this.store) {
      const r = await this.store.commit(RUN_ID, `k${this.#key++}`, command);
      if (!r.ok) return r.rejection;
      if (r.warnings) throw new Error(r.warnings.join('; '));
      this.state = r.state;
      this.events.push(...r.events);
      return null;
    }
    const d = decide(this.state, command);
    if (!d.ok) return d.rejection;
    for (const e of d.events) this.state = evolve(this.state, e);
    this.events.push(...d.events);
    return null;
  }

  /** Sends a command that must be accepted. */
  async ok(input: Input, actor: Actor = ALICE): Promise<void> {
    const r = await this.send(input, actor);
    if (r) throw new Error(`${input.type} refused: ${r.message}`);
  }

  get run(): RunState {
    if (!this.state) throw new Error('not started');
    return this.state;
  }

  get current(): string {
    return this.run.steps[this.run.cursor]!.id;
  }

  start(workflow: Workflow = PABCD_WORKFLOW): Promise<void> {
    const layout = 'codexclaw';
    const spec = 'Add a login page.';
    return this.ok({
      type: 'start',
      runId: RUN_ID,
      workflow,
      workspace: this.workspace,
      layout,
      spec,
    });
  }

  /** The current step's agent runs and finishes with `attest` (and `action`). */
  async finish(attest?: Attestation, action: Directive['action'] = 'continue'): Promise<void> {
    const stepId = this.current;
    const attempt = this.run.steps[this.run.cursor]!.attempt;
    await this.ok({ type: 'stepStarted', stepId, attempt });
    const directive = { action, ...(attest && { attest }) } as Directive;
    await this.ok({
      type: 'stepFinished',
      stepId,
      attempt,
      exitCode: 0,
      directive,
      telemetry: NO_TOKENS,
    });
  }

  /** Passes every gate up to (not including) the step `until`. */
  async passUntil(until: string): Promise<void> {
    while (this.current !== until) await this.finish(PASS[this.current]);
  }
}

/** A temp workspace with a store writing the codexclaw layout. */
export function storeDriver(): { d: PabcdDriver; ws: string; dispose: () => Promise<void> } {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cxc-'));
  const store = new RunStore({ workspace: ws, layouts: [codexclawLayout] });
  const d = new PabcdDriver(ws, store);
  return {
    d,
    ws,
    dispose: async () => {
      await store.close();
      fs.rmSync(ws, { recursive: true, force: true });
    },
  };
}

/** The layout's files: the session State and the ledger rows. */
export function readCodexclaw(ws: string, runId = RUN_ID): { session: unknown; ledger: unknown[] } {
  const root = path.join(ws, '.codexclaw');
  const session = JSON.parse(fs.readFileSync(path.join(root, 'sessions', `${runId}.json`), 'utf8'));
  const text = fs.readFileSync(path.join(root, 'ledger.jsonl'), 'utf8');
  const ledger = text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
  return { session, ledger };
}
