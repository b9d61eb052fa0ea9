/**
 * Setup file of the fast tier: a test there that starts a child process (agent, git, CLI,
 * redis-server) fails at once, naming the command, so a new file that does lands in the slow tier
 * (test/support/tiers.ts) instead of slowing the loop contributors run on every save.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { afterAll } from 'vitest';
import { startCpuReport } from './cpu-report.ts';

const childProcess = createRequire(import.meta.url)(
  'node:child_process',
) as typeof import('node:child_process');

const NAMES = [
  'spawn',
  'spawnSync',
  'exec',
  'execSync',
  'execFile',
  'execFileSync',
  'fork',
] as const;

const attempts: string[] = [];
for (const name of NAMES) {
  (childProcess as Record<string, unknown>)[name] = (command: unknown, ...rest: unknown[]) => {
    const args = Array.isArray(rest[0]) ? ` ${(rest[0] as unknown[]).join(' ')}` : '';
    attempts.push(`${name} ${String(command)}${args}`);
    throw new Error(message(attempts.at(-1)!));
  };
}

function message(what: string): string {
  return (
    `fast tier: this test started a child process (${what}). Files that start processes, need ` +
    'Redis or a browser belong in the slow tier: add the file to SLOW_FILES in ' +
    'test/support/tiers.ts (docs/test-reliability.md, "Tiers").'
  );
}

// Code that catches the error (a "tool missing?" probe) would turn the file into a silent skip.
const cpuReport = startCpuReport();
// biome-ignore lint/correctness/noEmptyPattern: vitest 4 passes the suite second, after a fixture object.
afterAll(({}, suite) => {
  cpuReport(suite.file.filepath);
  if (attempts.length > 0) throw new Error(message(attempts.join('; ')));
});
// ESM `import { spawn } from 'node:child_process'` reads the builtin's exports: update them too.
syncBuiltinESMExports();
