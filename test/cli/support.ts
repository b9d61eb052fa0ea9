/** Runs the real `phasebridge` CLI (node bin/phasebridge.js) in a child process, for CLI tests. */
import { spawn, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { slow } from '../support/slowdown.ts';

const BIN = resolve(import.meta.dirname, '../../bin/phasebridge.js');

/**
 * Timeout of a test that walks a run through many CLI invocations: each one is a fresh Node
 * process (about a second of CPU), so a busy 2-core machine needs headroom over the default.
 */
export const MANY_STEPS_TIMEOUT_MS = slow(120_000);

/** What a CLI run printed and returned. */
export interface CliResult {
  code: number | null;
  out: string;
  err: string;
}

/** Runs `phasebridge ...args` with its own PHASEBRIDGE_HOME and a fast demo agent. */
export function runCli(args: readonly string[], home: string, cwd: string): CliResult {
  const res = spawnSync(process.execPath, [BIN, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: home,
      LOG_LEVEL: 'silent',
      DEMO_AGENT_BEHAVIOUR: 'sleep=20',
    },
    encoding: 'utf8',
    timeout: slow(60_000),
  });
  return { code: res.status, out: res.stdout, err: res.stderr };
}

/**
 * Runs `phasebridge ...args` without blocking this process, so fakes served from this test
 * process can answer it; `env` adds to (or overrides) the runCli environment, `input` is what
 * the command reads on stdin.
 */
export function runCliAsync(
  args: readonly string[],
  home: string,
  cwd: string,
  env: Record<string, string> = {},
  input = '',
): Promise<CliResult> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: home,
      LOG_LEVEL: 'silent',
      DEMO_AGENT_BEHAVIOUR: 'sleep=20',
      ...env,
    },
    timeout: slow(60_000),
  });
  // What a person would type (or nothing): stdin is then closed.
  child.stdin.end(input);
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}
