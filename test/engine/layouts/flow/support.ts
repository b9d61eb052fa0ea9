/**
 * Test support for the flow layout: a RunStore projecting the flow layout into a temp workspace
 * (with a `.git` naming branch and origin, so `context` is stable), commands at fixed times, the
 * published JSON Schemas (vendored in test/fixtures/flow-schemas) through ajv, and PyYAML when present.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { Command } from '../../../../src/engine/commands.ts';
import type { Directive } from '../../../../src/engine/directive.ts';
import { flowLayout } from '../../../../src/engine/layouts/flow/index.ts';
import type { Actor, RunState, Workflow } from '../../../../src/engine/model.ts';
import { RunStore } from '../../../../src/engine/store/run-store.ts';
import { FLOW_START_ISSUE_WORKFLOW } from '../../../../src/engine/workflow/builtin.ts';

export const ALICE: Actor = { id: 'telegram:1', name: 'Alice' };
export const RUN_ID = '2026-05-20T143000Z-issue-42';
const T0 = Date.UTC(2026, 4, 20, 14, 30, 0);
const NO_TOKENS = { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 };

type Input = Command extends infer C
  ? C extends Command
    ? Omit<C, 'at' | 'actor'>
    : never
  : never;

/** Drives one flow-layout run through a RunStore. */
export class FlowDriver {
  state: RunState | null = null;
  #tick = 0;
  #key = 0;
  constructor(
    readonly workspace: string,
    public store: RunStore,
  ) {}

  async ok(input: Input, actor: Actor = ALICE): Promise<RunState> {
    const at = new Date(T0 + this.#tick++ * 1000).toISOString();
    const r = await this.store.commit(RUN_ID, `k${this.#key++}`, {
      ...input,
      at,
      actor,
    } as Command);
    if (!r.ok) throw new Error(`${input.type} refused: ${r.rejection.message}`);
    if (r.warnings) throw new Error(r.warnings.join('; '));
    this.state = r.state;
    return r.state;
  }

  get run(): RunState {
    if (!this.state) throw new Error('not started');
    return this.state;
  }

  start(workflow: Workflow = FLOW_START_ISSUE_WORKFLOW) {
    return this.ok({
      type: 'start',
      runId: RUN_ID,
      workflow,
      workspace: this.workspace,
      layout: 'flow',
      spec: 'Fix issue 42.',
    });
  }

  /** The current step starts and finishes with `directive`. */
  async finish(directive: Directive = { action: 'continue' }) {
    const step = this.run.steps[this.run.cursor]!;
    await this.ok({ type: 'stepStarted', stepId: step.id, attempt: step.attempt });
    return this.ok({
      type: 'stepFinished',
      stepId: step.id,
      attempt: step.attempt,
      exitCode: 0,
      directive,
      telemetry: NO_TOKENS,
    });
  }

  approve() {
    return this.ok({ type: 'answerCheckpoint', answer: 'approve' });
  }
}

/** A temp workspace with a `.git` (branch issue-42, origin acme/shop) and a store on it. */
export function flowWorkspace(): { d: FlowDriver; ws: string; dispose: () => Promise<void> } {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-flow-'));
  fs.mkdirSync(path.join(ws, '.git'));
  fs.writeFileSync(path.join(ws, '.git', 'HEAD'), 'ref: refs/heads/issue-42\n');
  fs.writeFileSync(
    path.join(ws, '.git', 'config'),
    '[remote "origin"]\n\turl = git@github.com:acme/shop.git\n',
  );
  const d = new FlowDriver(ws, new RunStore({ workspace: ws, layouts: [flowLayout] }));
  return {
    d,
    ws,
    dispose: async () => {
      await d.store.close();
      fs.rmSync(ws, { recursive: true, force: true });
    },
  };
}

/** The run's flow folder. */
export function flowDir(ws: string, runId = RUN_ID): string {
  return path.join(ws, '.flow', 'runs', runId);
}

/** Every flow file of the run: name → text (activities sorted by number). */
export function flowFiles(ws: string, runId = RUN_ID): [string, string][] {
  const dir = flowDir(ws, runId);
  const acts = fs
    .readdirSync(path.join(dir, 'activities'))
    .filter((f) => f.endsWith('.yaml'))
    .sort();
  return [
    ['run.yaml', fs.readFileSync(path.join(dir, 'run.yaml'), 'utf8')],
    ...acts.map((f): [string, string] => [
      `activities/${f}`,
      fs.readFileSync(path.join(dir, 'activities', f), 'utf8'),
    ]),
    ['events.jsonl', fs.readFileSync(path.join(dir, 'events.jsonl'), 'utf8')],
  ];
}

/** The published flow schemas, vendored (test/fixtures/flow-schemas/README.md says from where). */
const SCHEMA_DIR = path.resolve(import.meta.dirname, '../../../fixtures/flow-schemas');

let validators: { run: (d: unknown) => string[]; activity: (d: unknown) => string[] } | null = null;

/** Validators of the published run and activity schemas (errors as text, [] when valid). */
export function flowValidators() {
  if (validators) return validators;
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const load = (f: string) =>
    JSON.parse(fs.readFileSync(path.join(SCHEMA_DIR, f), 'utf8')) as object;
  const wrap = (v: ReturnType<typeof ajv.compile>) => (d: unknown) =>
    v(d) ? [] : (v.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message}`);
  validators = {
    run: wrap(ajv.compile(load('run.schema.json'))),
    activity: wrap(ajv.compile(load('activity.schema.json'))),
  };
  return validators;
}

/** Schema problems of every flow file of the run (empty when all valid). */
export function schemaProblems(ws: string, runId = RUN_ID): string[] {
  const v = flowValidators();
  const out: string[] = [];
  for (const [name, text] of flowFiles(ws, runId)) {
    if (name === 'events.jsonl') continue;
    const doc = parse(text);
    const errs = name === 'run.yaml' ? v.run(doc) : v.activity(doc);
    out.push(...errs.map((e) => `${name}: ${e}`));
  }
  return out;
}

/** PyYAML's reading of each YAML text (as JSON), or null when python3 with PyYAML is not here. */
export function pyyamlReadAll(texts: readonly string[]): unknown[] | null {
  try {
    // One python3 start for all the texts: each start (with the yaml import) costs ~0.2 s of CPU.
    const out = execFileSync(
      'python3',
      [
        '-c',
        'import sys, json, yaml; print(json.dumps([yaml.safe_load(t) for t in json.load(sys.stdin)], default=str))',
      ],
      { input: JSON.stringify(texts), encoding: 'utf8' },
    );
    return JSON.parse(out) as unknown[];
  } catch {
    return null;
  }
}

/** True when python3 can import yaml (PyYAML). */
export function pyyamlPresent(): boolean {
  return pyyamlReadAll(['a: 1']) !== null;
}
