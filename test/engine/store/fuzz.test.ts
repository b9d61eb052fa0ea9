/**
 * Fuzz: random bytes and valid-looking JSON in a codemachine run's files (ledger.jsonl, run.json,
 * template.json, directive.json, registry.db), then the RunStore used as callers use it (peek,
 * load, commit, repair). Every failure must be one of our typed errors; nothing may be written
 * outside the run's workspace, and another workspace's run must stay untouched.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/engine/commands.ts';
import { CodemachineLayout } from '../../../src/engine/layouts/codemachine/index.ts';
import type { RunState } from '../../../src/engine/model.ts';
import { RunStore } from '../../../src/engine/store/run-store.ts';
import { PhasebridgeError } from '../../../src/errors.ts';
import { nextCommand, startCommand } from './fixtures/demo-run.ts';
import { RUN } from './fixtures/workspace.ts';

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-fuzz-'));
/** The fuzzed workspace (restored from `pristine` before each case), and a bystander. */
const ws = path.join(root, 'ws');
const pristine = path.join(root, 'pristine');
const other = path.join(root, 'other');
const runDir = path.join(ws, '.phasebridge', 'runs', RUN);
const FILES = {
  ledger: path.join(runDir, 'ledger.jsonl'),
  runJson: path.join(runDir, 'run.json'),
  template: path.join(ws, '.codemachine', 'template.json'),
  directive: path.join(ws, '.codemachine', 'memory', 'directive.json'),
  registry: path.join(ws, '.codemachine', 'logs', 'registry.db'),
};
type Target = keyof typeof FILES;

/** Starts a codemachine run in `workspace` and commits `count` more commands. */
async function makeRun(workspace: string, count: number): Promise<void> {
  fs.mkdirSync(workspace, { recursive: true });
  const layout = new CodemachineLayout();
  const store = new RunStore({ workspace, layouts: [layout] });
  let r = await store.commit(RUN, 'start', {
    ...startCommand(RUN, workspace),
    layout: 'codemachine',
  });
  for (let n = 1; n <= count && r.ok; n++) {
    r = await store.commit(RUN, `k${n}`, nextCommand(r.state, n));
  }
  await store.close();
  layout.close();
  if (!r.ok) throw new Error(r.rejection.message);
}

/** Path → sha256 of every file below `dir`. */
function hashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!f.isFile()) continue;
    const p = path.join(f.parentPath, f.name);
    out[path.relative(dir, p)] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
  }
  return out;
}

let otherBefore: Record<string, string>;
let lines: string[];
beforeAll(async () => {
  await makeRun(ws, 6);
  fs.cpSync(ws, pristine, { recursive: true });
  await makeRun(other, 3);
  otherBefore = hashes(other);
  lines = fs.readFileSync(FILES.ledger, 'utf8').split('\n').slice(0, -1);
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** A JSON value with some fields from a real ledger line or run state mixed in. */
const jsonish = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.record(
    {
      v: fc.constantFrom(1, 2, '1'),
      seq: fc.oneof(fc.nat(30), fc.integer()),
      key: fc.oneof(fc.constantFrom('start', 'k1', 'k2'), fc.string()),
      at: fc.constantFrom('2026-11-29T14:30:00.000Z', 'soon'),
      command: fc.constantFrom('start', 'stepStarted', 'cancel', ''),
      actor: fc.constantFrom({ id: 'x' }, null),
      events: fc.array(
        fc.record(
          {
            type: fc.constantFrom(
              'runStarted',
              'stepQueued',
              'stepStarted',
              'checkpointOpened',
              'runCompleted',
              'x',
            ),
            stepId: fc.constantFrom('plan', 'build', 'nope'),
            attempt: fc.nat(3),
            runId: fc.constantFrom(RUN, 'other'),
            workspace: fc.constantFrom(ws, other, '/'),
            workflow: fc.oneof(
              fc.jsonValue({ maxDepth: 2 }),
              fc.constant({ id: 'demo', version: '0', steps: [] }),
            ),
            checkpoint: fc.jsonValue({ maxDepth: 2 }),
            at: fc.constant('2026-11-29T14:30:00.000Z'),
          },
          { requiredKeys: ['type'] },
        ),
        { maxLength: 3 },
      ),
      effects: fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 2 }),
      id: fc.constantFrom(RUN, 'other'),
      status: fc.constantFrom('completed', 'active', 7),
      workspace: fc.constantFrom(ws, other),
    },
    { requiredKeys: [] },
  ),
);

/** Fields of real events a 'field' damage changes (`workflow.steps` and `steps.0` go deeper). */
const EVENT_KEYS = [
  'type',
  'stepId',
  'attempt',
  'mode',
  'workflow',
  'workflow.steps',
  'workflow.steps.0',
  'workflow.steps.0.id',
  'layout',
  'selectedConditions',
  'startedBy',
  'checkpoint',
  'checkpointId',
  'decision',
  'vote',
  'telemetry',
  'directive',
  'kind',
  'at',
  'counter',
  'toStepId',
] as const;

/** `obj` with the dotted `key` set to `value` (deleted when undefined); made when missing. */
function setPath(obj: Record<string, unknown>, key: string, value: unknown): void {
  const parts = key.split('.');
  let at: Record<string, unknown> = obj;
  for (const p of parts.slice(0, -1)) {
    if (typeof at[p] !== 'object' || at[p] === null) at[p] = {};
    at = at[p] as Record<string, unknown>;
  }
  const last = parts.at(-1)!;
  if (value === undefined) delete at[last];
  else at[last] = value;
}

/** How a file is damaged. */
const damage = fc.oneof(
  fc.uint8Array({ maxLength: 600 }).map((b) => ({ kind: 'bytes' as const, bytes: Buffer.from(b) })),
  jsonish.map((j) => ({ kind: 'json' as const, text: JSON.stringify(j) })),
  fc.record({ at: fc.nat(), json: jsonish }).map((r) => ({ kind: 'line' as const, ...r })),
  fc.nat().map((at) => ({ kind: 'cut' as const, at })),
  fc
    .record({
      line: fc.nat(),
      event: fc.nat(),
      key: fc.constantFrom(...EVENT_KEYS),
      value: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constant(undefined)),
    })
    .map((r) => ({ kind: 'field' as const, ...r })),
  fc.constant({ kind: 'elsewhere' as const }),
);
type Damage = typeof damage extends fc.Arbitrary<infer D> ? D : never;

/** Writes the damage into one of the run's files. */
function apply(target: Target, d: Damage): void {
  const file = FILES[target];
  const current = fs.existsSync(file) ? fs.readFileSync(file) : Buffer.alloc(0);
  let next: Buffer;
  switch (d.kind) {
    case 'bytes':
      next = d.bytes;
      break;
    case 'json':
      next = Buffer.from(`${d.text}\n`);
      break;
    case 'line': {
      // One line of the ledger (or the whole of another file) replaced by a valid-looking one.
      const ls = target === 'ledger' ? [...lines] : [];
      ls[d.at % (ls.length + 1)] = JSON.stringify(d.json);
      next = Buffer.from(`${ls.join('\n')}\n`);
      break;
    }
    case 'field': {
      // A real ledger line whose event has one field changed: it still parses.
      const ls = [...lines];
      const i = d.line % ls.length;
      const entry = JSON.parse(ls[i]!) as { events: Record<string, unknown>[] };
      const event = entry.events[d.event % Math.max(1, entry.events.length)];
      if (event) setPath(event, d.key, d.value);
      ls[i] = JSON.stringify(entry);
      next = target === 'ledger' ? Buffer.from(`${ls.join('\n')}\n`) : Buffer.from(ls[i]!);
      break;
    }
    case 'cut':
      next = current.subarray(0, d.at % (current.length + 1));
      break;
    case 'elsewhere':
      // Every mention of this workspace made to name the other one.
      next = Buffer.from(current.toString('latin1').replaceAll(ws, other), 'latin1');
      break;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  if (target === 'registry') {
    for (const f of [`${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
  }
  fs.writeFileSync(file, next);
}

/** Runs `op`; a throw must be a typed phasebridge error. Returns the value or undefined. */
async function typed<T>(what: string, op: () => Promise<T>): Promise<T | undefined> {
  try {
    return await op();
  } catch (err) {
    if (!(err instanceof PhasebridgeError)) {
      throw new Error(`${what} threw an untyped ${(err as Error)?.name}: ${(err as Error)?.stack}`);
    }
    return undefined;
  }
}

function commandFor(state: RunState | undefined): Command {
  try {
    if (state) return nextCommand(state, 99);
  } catch {
    // a state the demo driver cannot read: any command will do
  }
  return { type: 'cancel', at: '2026-11-29T14:30:00.000Z', actor: { id: 'cli:fuzz' } };
}

describe('fuzzed run files', () => {
  it('only typed errors, no write outside the workspace, the other run untouched', async () => {
    const rootBefore = fs.readdirSync(root).sort();
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...(Object.keys(FILES) as Target[])), damage), {
          minLength: 1,
          maxLength: 3,
        }),
        fc.boolean(),
        async (damages, repairFirst) => {
          fs.rmSync(ws, { recursive: true, force: true });
          fs.cpSync(pristine, ws, { recursive: true });
          for (const [target, d] of damages) apply(target, d);
          const layout = new CodemachineLayout();
          const store = new RunStore({ workspace: ws, layouts: [layout] });
          try {
            const peeked = await typed('peek', () => store.peek(RUN));
            await typed('dry repair', () => store.repair(RUN, { dryRun: true }));
            if (repairFirst) await typed('repair', () => store.repair(RUN));
            const loaded = await typed('load', () => store.load(RUN));
            const state = loaded?.state ?? peeked?.state;
            await typed('commit', () => store.commit(RUN, 'fuzz-1', commandFor(state)));
            await typed('commit again', () => store.commit(RUN, 'fuzz-1', commandFor(state)));
            await typed('list', () => store.list());
          } finally {
            await store.close();
            layout.close();
          }
          expect(hashes(other)).toEqual(otherBefore);
          expect(fs.readdirSync(root).sort()).toEqual(rootBefore);
        },
      ),
      {
        numRuns: Number(process.env.FUZZ_RUNS ?? 150),
        seed: Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000),
      },
    );
    // The bystander's run still loads as it was.
    const store = new RunStore({ workspace: other });
    expect((await store.peek(RUN)).corrupt).toBeNull();
    await store.close();
  });
});
