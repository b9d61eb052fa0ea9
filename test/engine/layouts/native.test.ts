import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decide } from '../../../src/engine/decide.ts';
import { evolve } from '../../../src/engine/evolve.ts';
import {
  formatRunJson,
  nativeLayout,
  nativeRunDir,
  readRunJson,
  runSummary,
} from '../../../src/engine/layouts/native.ts';
import type { RunState } from '../../../src/engine/model.ts';
import { startCommand } from '../store/fixtures/demo-run.ts';

const RUN = '2026-11-29T143000Z-native';
let ws: string;
let runDir: string;
beforeEach(() => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-native-'));
  runDir = nativeRunDir(ws, RUN);
  fs.mkdirSync(runDir, { recursive: true });
});
afterEach(() => {
  fs.rmSync(ws, { recursive: true, force: true });
});

function startedState(): RunState {
  const d = decide(null, startCommand(RUN, ws));
  if (!d.ok) throw new Error(d.rejection.message);
  return d.events.reduce<RunState | null>(evolve, null)!;
}

describe('native layout', () => {
  it('lives in <workspace>/.phasebridge/runs/<id>', () => {
    expect(runDir).toBe(path.join(ws, '.phasebridge', 'runs', RUN));
  });

  it('writes run.json (the run summary with its seq, owner-only) and creates logs/', async () => {
    const state = startedState();
    await nativeLayout.project(state, {
      runDir,
      workspace: ws,
      events: [],
      previous: null,
      rebuild: false,
    });
    const text = fs.readFileSync(path.join(runDir, 'run.json'), 'utf8');
    expect(text).toBe(formatRunJson(state));
    expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(runSummary(state))));
    expect(JSON.parse(text)).toMatchObject({
      format: 2,
      id: RUN,
      seq: state.seq,
      status: 'active',
      cursor: 0,
      current: state.steps[0],
      workflow: { id: 'demo', steps: 3 },
      checkpoint: null,
      closedCheckpoints: 0,
    });
    expect(fs.statSync(path.join(runDir, 'run.json')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(runDir, 'logs')).isDirectory()).toBe(true);
    expect(readRunJson(runDir)).toEqual({
      kind: 'ok',
      id: RUN,
      seq: state.seq,
      value: JSON.parse(text),
      text,
    });
  });

  it('applies to every run whatever its layout', () => {
    expect(nativeLayout.appliesTo?.({ ...startedState(), layout: 'codemachine' })).toBe(true);
  });

  it('reads a missing, an unparseable, a non-state and a symlinked run.json safely', () => {
    expect(readRunJson(runDir)).toEqual({ kind: 'missing' });
    const file = path.join(runDir, 'run.json');
    fs.writeFileSync(file, '{"id":');
    expect(readRunJson(runDir)).toMatchObject({ kind: 'corrupt', reason: /not valid JSON/ });
    fs.writeFileSync(file, '[]');
    expect(readRunJson(runDir)).toMatchObject({ kind: 'corrupt', reason: /not a run summary/ });
    fs.rmSync(file);
    fs.writeFileSync(path.join(ws, 'elsewhere.json'), formatRunJson(startedState()));
    fs.symlinkSync(path.join(ws, 'elsewhere.json'), file);
    expect(readRunJson(runDir)).toEqual({ kind: 'corrupt', reason: 'run.json is a symlink' });
  });

  it('refuses to write run.json through a symlink', async () => {
    fs.writeFileSync(path.join(ws, 'elsewhere.json'), 'keep');
    fs.symlinkSync(path.join(ws, 'elsewhere.json'), path.join(runDir, 'run.json'));
    const ctx = { runDir, workspace: ws, events: [], previous: null, rebuild: false };
    await expect(nativeLayout.project(startedState(), ctx)).rejects.toMatchObject({
      code: 'CORRUPT_STATE',
    });
    expect(fs.readFileSync(path.join(ws, 'elsewhere.json'), 'utf8')).toBe('keep');
  });
});
