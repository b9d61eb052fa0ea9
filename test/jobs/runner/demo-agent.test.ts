import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/jobs/runner/run-agent.ts';
import { holdsFor } from '../../support/slowdown.ts';
import { demoAgent, invocation, makeTempRun, type TempRun } from './helpers.ts';

let run: TempRun;
beforeEach(() => {
  run = makeTempRun();
});
afterEach(() => run.cleanup());

describe('examples/demo-agent.mjs', () => {
  it('takes behaviour from DEMO_AGENT_BEHAVIOUR, and the prompt wins per key', async () => {
    const baseEnv = {
      PATH: process.env.PATH ?? '',
      DEMO_AGENT_BEHAVIOUR: 'sleep=0 exit=4 directive=pause',
    };
    const fromEnv = await runAgent(
      demoAgent(),
      invocation(run, { baseEnv, prompt: 'no demo line' }),
    );
    expect(fromEnv).toMatchObject({ exitCode: 4, directive: { action: 'pause' } });
    const overridden = await runAgent(
      demoAgent(),
      invocation(run, { baseEnv, prompt: 'demo: exit=0' }),
    );
    expect(overridden).toMatchObject({ ok: true, exitCode: 0, directive: { action: 'pause' } });
  });

  it('loops only the first K times per run and step, then continues', async () => {
    const prompt = 'demo: sleep=0 directive=loop loops=2 reason="again"';
    const actions: string[] = [];
    for (let i = 0; i < 3; i++) {
      const out = await runAgent(demoAgent(), invocation(run, { prompt, attempt: i + 1 }));
      actions.push(out.directive?.action ?? 'none');
    }
    expect(actions).toEqual(['loop', 'loop', 'continue']);
    const other = await runAgent(demoAgent(), invocation(run, { prompt, stepId: 'review' }));
    expect(other.directive).toEqual({ action: 'loop', reason: 'again' });
    const state = JSON.parse(
      fs.readFileSync(path.join(path.dirname(run.directiveFile), 'demo-loop-count.json'), 'utf8'),
    );
    expect(state).toEqual({ build: 2, review: 1 });
  });

  it('together=2: each of two agents of a step waits until the other has started', async () => {
    const prompt = 'demo: sleep=0 together=2';
    const first = runAgent(demoAgent(), invocation(run, { prompt, attempt: 1 }));
    // The second starts only once the first is waiting for it.
    const marks = path.join(run.workspace, '.phasebridge', 'demo-together');
    while (!fs.existsSync(marks) || fs.readdirSync(marks).length === 0) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const [folder] = fs.readdirSync(marks);
    while (fs.readdirSync(path.join(marks, folder!)).length === 0) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const second = await runAgent(demoAgent(), invocation(run, { prompt, attempt: 2 }));
    for (const out of [await first, second]) {
      expect(out.ok).toBe(true);
      expect(out.outputTail).toContain('demo-agent: together=2: all started');
    }
  });

  it('waitfor=PATH: holds the agent until the file exists, or until its folder is gone', async () => {
    const gate = path.join(run.workspace, 'gate', 'go');
    fs.mkdirSync(path.dirname(gate));
    let finished = false;
    const held = runAgent(
      demoAgent(),
      invocation(run, { prompt: `demo: sleep=0 waitfor=${gate}` }),
    );
    void held.then(() => {
      finished = true;
    });
    await holdsFor(() => !finished, 500, 'the agent finished before its file existed');
    fs.writeFileSync(gate, '');
    const out = await held;
    expect(out.ok).toBe(true);
    expect(out.outputTail).toContain(`demo-agent: waitfor=${gate}: there`);

    const gone = path.join(run.workspace, 'gone', 'go');
    const orphan = await runAgent(
      demoAgent(),
      invocation(run, { prompt: `demo: sleep=0 waitfor=${gone}`, attempt: 2 }),
    );
    expect(orphan.ok).toBe(true);
    expect(orphan.outputTail).toContain(
      `demo-agent: waitfor=${gone}: its folder is gone, going on`,
    );
  });

  it('writes every directive action', async () => {
    for (const action of ['stop', 'error', 'pause', 'checkpoint', 'continue']) {
      const out = await runAgent(
        demoAgent(),
        invocation(run, { prompt: `demo: sleep=0 directive=${action}` }),
      );
      expect(out.directive).toEqual({ action });
    }
  });

  it('writes a PABCD attestation, numbers as numbers, with continue unless told otherwise', async () => {
    const prompt =
      'demo: sleep=0 did="ran the suite" checkOutput="12 passed" exitCode=0 verdict=pass';
    const out = await runAgent(demoAgent(), invocation(run, { prompt }));
    expect(out.directive).toEqual({
      action: 'continue',
      attest: { did: 'ran the suite', checkOutput: '12 passed', verdict: 'pass', exitCode: 0 },
    });
    const looped = await runAgent(
      demoAgent(),
      invocation(run, { prompt: 'demo: sleep=0 directive=stop did="gave up" scanRounds=2' }),
    );
    expect(looped.directive).toEqual({
      action: 'stop',
      attest: { did: 'gave up', scanRounds: 2 },
    });
  });

  it('reads the prompt from a file argument with promptVia file', async () => {
    const agent = { ...demoAgent(), promptVia: 'file' as const };
    const out = await runAgent(
      agent,
      invocation(run, { prompt: 'From a file.\ndemo: sleep=0 directive=stop' }),
    );
    expect(out.directive).toEqual({ action: 'stop' });
    expect(out.outputTail).toContain('demo-agent: prompt (41 chars): From a file.');
  });
});
