/**
 * The real Claude Code and Codex CLIs, installed into `.cache/agents` by
 * scripts/install-agent-clis.mjs (never as project dependencies: ~780 MB together). Without the
 * cache the real-CLI suites are skipped with a loud banner, except in CI where it is a failure.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** The cache's `.bin` folder (PHASEBRIDGE_AGENT_CLI_CACHE overrides the cache folder). */
export const AGENT_CLI_BIN = join(
  process.env.PHASEBRIDGE_AGENT_CLI_CACHE ?? resolve(import.meta.dirname, '../../.cache/agents'),
  'node_modules',
  '.bin',
);

/** True when both CLIs are installed in the cache. */
export function agentClisInstalled(): boolean {
  return existsSync(join(AGENT_CLI_BIN, 'claude')) && existsSync(join(AGENT_CLI_BIN, 'codex'));
}

/** The banner printed when the real-CLI tests are skipped. */
export const NO_AGENT_CLIS_BANNER = [
  '',
  '#'.repeat(78),
  '#  Real agent-CLI tests SKIPPED: Claude Code / Codex are not in .cache/agents.',
  '#  Install them (about 780 MB, outside node_modules):   node scripts/install-agent-clis.mjs',
  '#  In CI (CI=true) this is a failure.',
  '#'.repeat(78),
  '',
].join('\n');
