/**
 * Issue 18 item 4: chained prompts. A step's `prompt:` list runs in order in one job, each
 * finished prompt recorded (chainCompleted, CodeMachine's completedSteps[i].completedChains); a
 * retry goes on from the first prompt not completed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chainAgent } from '../../../src/jobs/orchestrator/chain-runner.ts';
import { ALICE, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** A one-step workflow whose step chains `prompts` (YAML list) for the demo agent. */
function chained(prompts: string[], extra = ''): string {
  const list = prompts.map((p) => `      - "${p}"`).join('\n');
  return `id: chain\nsteps:\n  - id: build\n    agent: demo\n    prompt:\n${list}\n${extra}`;
}

const chainEvents = (state: Parameters<typeof ledgerOf>[0]) =>
  ledgerOf(state)
    .flatMap((e) => e.events)
    .filter(
      (e) => e.type === 'chainCompleted' || e.type === 'stepCompleted' || e.type === 'stepFailed',
    )
    .map((e) => (e.type === 'chainCompleted' ? `chain ${e.chainIndex}` : e.type));

describe('chained prompts', () => {
  it('run in order in one job, each recorded in the ledger and in template.json', async () => {
    env = await makeEnv();
    env.workflow(
      'chain',
      chained(['first\\ndemo: sleep=5', 'second\\ndemo: sleep=5', 'third\\ndemo: sleep=5']),
    );
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'chain',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
      layout: 'codemachine',
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    expect(state.steps[0]).toMatchObject({ attempt: 1, completedChains: [0, 1, 2] });
    expect(chainEvents(state)).toEqual(['chain 0', 'chain 1', 'chain 2', 'stepCompleted']);
    expect(repeatedKeys(ledgerOf(state))).toEqual([]);

    const log = fs.readFileSync(await o.logPath(run.id, 'build', 1), 'utf8');
    const at = ['first', 'second', 'third'].map((p) => log.indexOf(`prompt:\n${p}\ndemo:`));
    expect(at.every((i) => i >= 0)).toBe(true);
    expect([...at].sort((a, b) => a - b)).toEqual(at);
    const template = JSON.parse(
      fs.readFileSync(path.join(env.workspace, '.codemachine', 'template.json'), 'utf8'),
    );
    expect(template.completedSteps['0'].completedChains).toEqual([0, 1, 2]);
  });

  it('a failed prompt ends the attempt; the retry skips the prompts already completed', async () => {
    env = await makeEnv();
    env.workflow(
      'chain',
      chained(
        ['first\\ndemo: sleep=5', 'second\\ndemo: exit=3'],
        '    retries:\n      count: 1\n      backoff: 20ms\n',
      ),
    );
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'chain',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('blocked');
    expect(state.steps[0]).toMatchObject({ attempt: 2, completedChains: [0] });
    expect(chainEvents(state)).toEqual(['chain 0', 'stepFailed', 'stepFailed']);
    const second = fs.readFileSync(await o.logPath(run.id, 'build', 2), 'utf8');
    // The demo agent echoes the first line of the prompt it got.
    expect(second).not.toMatch(/prompt \(\d+ chars\): first/);
    expect(second).toMatch(/prompt \(\d+ chars\): second/);
  });
});

describe('chainAgent', () => {
  const claude = { name: 'c', engine: 'claude' as const, argv: [], env: { A: '1' } };

  it('continues the engine session: Claude gets --resume, every engine the env', () => {
    expect(chainAgent(claude, 0, undefined)).toEqual({
      ...claude,
      env: { A: '1', PHASEBRIDGE_CHAIN_INDEX: '0' },
    });
    expect(chainAgent(claude, 1, 's-1')).toEqual({
      ...claude,
      argv: ['--resume', 's-1'],
      env: { A: '1', PHASEBRIDGE_CHAIN_INDEX: '1', PHASEBRIDGE_SESSION_ID: 's-1' },
    });
    // A full argv override is the user's command line: left as given.
    const own = { ...claude, argv: ['my-claude', '-p'] };
    expect(chainAgent(own, 1, 's-1').argv).toEqual(['my-claude', '-p']);
  });
});
