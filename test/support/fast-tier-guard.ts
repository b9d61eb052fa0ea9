/**
 * Setup file of the fast tier: a test there that starts a child process (agent, git, CLI,
 * redis-server) fails at once, naming the command, so a new file that does lands in the slow tier
 * (test/support/tiers.ts) instead of slowing the loop contributors run on every save.
 */
import { createRequire, syncBuiltinESMExports } from 'node:module';

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

for (const name of NAMES) {
  (childProcess as Record<string, unknown>)[name] = (command: unknown, ...rest: unknown[]) => {
    const args = Array.isArray(rest[0]) ? ` ${(rest[0] as unknown[]).join(' ')}` : '';
    throw new Error(
      `fast tier: this test started a child process (${name} ${String(command)}${args}). ` +
        'Files that start processes, need Redis or a browser belong in the slow tier: add the ' +
        'file to SLOW_FILES in test/support/tiers.ts (docs/test-reliability.md, "Tiers").',
    );
  };
}
// ESM `import { spawn } from 'node:child_process'` reads the builtin's exports: update them too.
syncBuiltinESMExports();
