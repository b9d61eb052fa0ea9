/**
 * PHASEBRIDGE_AGENT_NICE through the real CLI: a step's agent, started by `phasebridge run`,
 * runs that much below the CLI's priority, and `0` leaves it at the same priority.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCliAsync } from './support.ts';

const PRINT_NICE = fileURLToPath(
  new URL('../jobs/runner/fixtures/print-nice.mjs', import.meta.url),
);
const root = mkdtempSync(join(os.tmpdir(), 'pb-cli-nice-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Runs a one-step workflow whose agent prints its niceness; returns that line of its log. */
async function agentNiceness(env: Record<string, string>, name: string): Promise<string> {
  const home = join(root, `home-${name}`);
  const ws = join(root, `ws-${name}`);
  mkdirSync(join(ws, 'workflows'), { recursive: true });
  writeFileSync(
    join(ws, 'workflows', 'nice.workflow.yaml'),
    'id: nice\nsteps:\n  - id: check\n    agent: nicecheck\n    prompt: "how nice?"\n',
  );
  const cli = (...args: string[]) => runCliAsync(args, home, ws, env);
  const added = await cli(
    'agents',
    'add',
    'nicecheck',
    '--engine',
    'command',
    '--',
    process.execPath,
    PRINT_NICE,
  );
  expect(added.code).toBe(0);
  const run = await cli('run', 'nice', '--workspace', ws, '--spec', 'check');
  expect(run.err).toBe('');
  const runId = /run (\S+) completed/.exec(run.out)?.[1];
  expect(runId, run.out).toBeDefined();
  const log = await cli('logs', runId!, 'check');
  return /^nice=.*$/m.exec(log.out)?.[0] ?? log.out;
}

describe('PHASEBRIDGE_AGENT_NICE', () => {
  const own = os.getPriority();
  it('starts agents that much below the CLI’s priority, and at the same with 0', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const lowered = Math.min(19, own + 5);
    expect(await agentNiceness({ PHASEBRIDGE_AGENT_NICE: '5' }, 'five')).toMatch(
      new RegExp(`^nice=${lowered} child=${lowered} `),
    );
    expect(await agentNiceness({ PHASEBRIDGE_AGENT_NICE: '0' }, 'zero')).toMatch(
      new RegExp(`^nice=${own} child=${own} `),
    );
  });
});
