/** How Claude starts phasebridge's approval MCP server (`permissions: ask`) from this checkout. */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { packageRootFrom } from './agent-resolver.ts';

/** `bin/phasebridge.js` of this checkout (from src/ under tsx or from the dist/ bundle). */
const BIN = join(packageRootFrom(dirname(fileURLToPath(import.meta.url))), 'bin', 'phasebridge.js');

/** `node bin/phasebridge.js approval-server` with the bridge's home, so it finds bridge.db. */
export function approvalServerCommand(home: string): {
  command: string;
  args: string[];
  env: Record<string, string>;
} {
  return {
    command: process.execPath,
    args: [BIN, 'approval-server'],
    env: { PHASEBRIDGE_HOME: home, LOG_LEVEL: 'silent' },
  };
}
