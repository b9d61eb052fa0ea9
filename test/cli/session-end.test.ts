/**
 * `serve` stopped by SIGTERM while runs wait at their checkpoints: the flow run's events.jsonl
 * gets flow's `session_end` (valid against the published run schema's event shape; run.yaml is
 * not touched), the coordinator session's state.json gets `updated_at` = the stop, and a second
 * serve takes both runs on to their end after an approval.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, describe, expect, it } from 'vitest';
import { slow } from '../support/slowdown.ts';
import { MANY_STEPS_TIMEOUT_MS, runCliAsync } from './support.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const SCHEMAS = path.resolve(import.meta.dirname, '../fixtures/flow-schemas');
const BEHAVIOUR = 'sleep=20 tasks=2 taskfile=.coordinator/tasks.json tests=2/2';
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cli-session-end-'));
const home = path.join(root, 'home');
const flowWs = path.join(root, 'flow-ws');
const coordWs = path.join(root, 'coord-ws');
fs.mkdirSync(flowWs);
fs.mkdirSync(coordWs);
const started: ChildProcess[] = [];
afterAll(async () => {
  for (const c of started) {
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await exited;
    }
  }
  fs.rmSync(root, { recursive: true, force: true });
});

/** Starts `serve` on the test's home (port 0); resolves once it is up. */
async function startServe(): Promise<{ child: ChildProcess; output: () => string }> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: home,
      PHASEBRIDGE_WORKSPACE: flowWs,
      PHASEBRIDGE_PORT: '0',
      LOG_LEVEL: 'info',
      DEMO_AGENT_BEHAVIOUR: BEHAVIOUR,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve not up:\n${out}`)), slow(60_000));
    const on = (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ctrl+C stops')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}:\n${out}`)));
  });
  return { child, output: () => out };
}

async function stop(child: ChildProcess): Promise<number | null> {
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  child.kill('SIGTERM');
  return exited;
}

/** `phasebridge <args>` against the running serve; its stdout, failing on a non-zero exit. */
async function cli(args: string[]): Promise<string> {
  const r = await runCliAsync(args, home, root, { DEMO_AGENT_BEHAVIOUR: BEHAVIOUR });
  if (r.code !== 0) throw new Error(`phasebridge ${args.join(' ')} → ${r.code}\n${r.out}${r.err}`);
  return r.out;
}

function runIdIn(ws: string): string {
  const ids = fs.readdirSync(path.join(ws, '.phasebridge', 'runs'));
  expect(ids).toHaveLength(1);
  return ids[0]!;
}

const eventsOf = (file: string) =>
  fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** Problems of an events.jsonl line against the run schema's event shape (events[] items). */
function eventProblems(line: unknown): string[] {
  const schema = JSON.parse(fs.readFileSync(path.join(SCHEMAS, 'run.schema.json'), 'utf8'));
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  const validate = ajv.compile(schema.properties.events.items);
  return validate(line) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

describe('serve stopped while flow and coordinator runs are active', () => {
  it('records session_end and updated_at, and a restart resumes the runs', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const first = await startServe();
    // Each `run` follows its run until it waits at its plan checkpoint.
    await cli(['run', 'flow-start-issue', '--workspace', flowWs, '--spec', 'Fix issue 7']);
    await cli(['run', 'coordinator', '--workspace', coordWs, '--spec', 'ship the backlog']);
    const flowId = runIdIn(flowWs);
    const coordId = runIdIn(coordWs);
    const flowDir = path.join(flowWs, '.flow', 'runs', flowId);
    const runYaml = fs.readFileSync(path.join(flowDir, 'run.yaml'), 'utf8');
    expect(runYaml).toContain('status: active');
    expect(eventsOf(path.join(flowDir, 'events.jsonl')).map((e) => e.type)).not.toContain(
      'session_end',
    );
    const stateFile = path.join(coordWs, '.coordinator', 'state.json');
    const before = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    expect(before.state).toBe('PLANNING');

    const stoppedAt = Date.now();
    expect(await stop(first.child)).toBe(0);
    expect(first.output()).toContain('flow: 1 active FlowRun(s) persisted');

    const events = eventsOf(path.join(flowDir, 'events.jsonl'));
    const end = events.at(-1)!;
    expect(end).toMatchObject({
      type: 'session_end',
      run_id: flowId,
      phase: 'plan',
      next_action: 'answer checkpoint plan:1',
      reason: 'phasebridge stopped',
    });
    expect(Date.parse(end.at as string)).toBeGreaterThanOrEqual(stoppedAt - 1000);
    expect(eventProblems(end)).toEqual([]);
    // SessionEnd does not mutate run.yaml.
    expect(fs.readFileSync(path.join(flowDir, 'run.yaml'), 'utf8')).toBe(runYaml);
    const after = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
    expect(after.state).toBe('PLANNING');
    expect(Date.parse(after.updated_at)).toBeGreaterThan(Date.parse(before.updated_at));
    expect(Date.parse(after.updated_at)).toBeGreaterThanOrEqual(stoppedAt - 1000);
    expect({ ...after, updated_at: null }).toEqual({ ...before, updated_at: null });

    // The next serve resumes both runs: approve the plans and they finish.
    const second = await startServe();
    await cli(['approve', flowId]);
    await cli(['approve', coordId]);
    const statusOf = async (id: string) =>
      (JSON.parse(await cli(['status', id, '--json'])) as { status: string }).status;
    // flow-start-issue asks once more, before its pr phase.
    expect(await statusOf(flowId)).toBe('awaiting');
    await cli(['approve', flowId]);
    expect(await statusOf(flowId)).toBe('completed');
    expect(await statusOf(coordId)).toBe('completed');
    expect(fs.readFileSync(path.join(flowDir, 'run.yaml'), 'utf8')).toContain('status: completed');
    // One session_end only: the second serve stopped with nothing active.
    expect(await stop(second.child)).toBe(0);
    expect(
      eventsOf(path.join(flowDir, 'events.jsonl')).filter((e) => e.type === 'session_end'),
    ).toHaveLength(1);
    expect(fs.existsSync(path.join(coordWs, '.coordinator'))).toBe(false);
  });
});
