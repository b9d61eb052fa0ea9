import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AgentDefinition, AgentInvocation } from '../../../src/jobs/runner/types.ts';

/** Absolute path of the demo agent script. */
export const DEMO_AGENT = fileURLToPath(
  new URL('../../../examples/demo-agent.mjs', import.meta.url),
);

/** Absolute path of a fixture file. */
export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** A temp folder laid out like a run: workspace, spec, memory and logs. */
export interface TempRun {
  root: string;
  workspace: string;
  specFile: string;
  directiveFile: string;
  logFile: string;
  cleanup(): void;
}

/** Creates a temp run folder; call cleanup() after the test. */
export function makeTempRun(): TempRun {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-runner-'));
  const workspace = path.join(root, 'ws');
  fs.mkdirSync(workspace);
  const specFile = path.join(workspace, '.codemachine', 'inputs', 'specification.md');
  fs.mkdirSync(path.dirname(specFile), { recursive: true });
  fs.writeFileSync(specFile, '# Add a login page\n\nDetails follow.\n');
  return {
    root,
    workspace,
    specFile,
    directiveFile: path.join(workspace, '.codemachine', 'memory', 'directive.json'),
    logFile: path.join(root, 'logs', 'build-1.log'),
    cleanup: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

/** The demo agent as a `command` agent run by this Node binary. */
export function demoAgent(env: Record<string, string> = {}): AgentDefinition {
  return { name: 'demo', engine: 'command', argv: [process.execPath, DEMO_AGENT], env };
}

/** A `command` agent running a fixture script with extra args. */
export function scriptAgent(script: string, ...args: string[]): AgentDefinition {
  return {
    name: script,
    engine: 'command',
    argv: [process.execPath, fixture(script), ...args],
    env: {},
  };
}

/** An invocation in `run` with a short kill grace and a clean base env. */
export function invocation(run: TempRun, over: Partial<AgentInvocation> = {}): AgentInvocation {
  return {
    runId: '2026-11-29T143000Z-add-login',
    stepId: 'build',
    attempt: 1,
    workspace: run.workspace,
    prompt: 'Build the login page.',
    specFile: run.specFile,
    directiveFile: run.directiveFile,
    logFile: run.logFile,
    timeoutMs: 20_000,
    killGraceMs: 300,
    baseEnv: { PATH: process.env.PATH ?? '' },
    ...over,
  };
}

/** True while `pid` runs; a zombie (killed but not reaped) is dead. */
export { processAlive as isAlive } from '../../support/process-alive.ts';

/** The pid the demo agent printed for its grandchild, from the step log. */
export function grandchildPid(logText: string): number {
  const m = /demo-agent: grandchild pid (\d+)/.exec(logText);
  if (!m) throw new Error(`no grandchild pid in log:\n${logText}`);
  return Number(m[1]);
}
