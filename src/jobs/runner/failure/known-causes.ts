/**
 * Known causes of agent failures and the line that fixes each. One table, read by the runner
 * (a step's failure) and by `doctor` (engine readiness), so both give the same advice.
 */

/** A recognised cause: how to spot it in the agent's words and what to do. */
export interface KnownCause {
  id: 'claude-login' | 'codex-login' | 'network' | 'permission' | 'claude-root';
  /** Matches the agent's reason text (or error code). */
  pattern: RegExp;
  fix: string;
}

/** The table; the first match wins. */
export const KNOWN_CAUSES: readonly KnownCause[] = [
  {
    id: 'claude-login',
    pattern: /not logged in \u00b7 please run \/login|authentication_failed|invalid api key/i,
    fix: 'not logged in: run `claude /login` (or set ANTHROPIC_API_KEY) as the user that runs the worker',
  },
  {
    id: 'codex-login',
    pattern: /codex login|401 unauthorized|missing bearer|not logged in/i,
    fix: 'not logged in: run `codex login` (or set OPENAI_API_KEY) as the user that runs the worker',
  },
  {
    id: 'claude-root',
    pattern: /cannot be used with root\/sudo privileges/i,
    fix: "Claude refuses permissions: full as root: run the worker as a normal user (inside a throwaway container, IS_SANDBOX=1 in the agent's env lifts it)",
  },
  {
    id: 'network',
    pattern:
      /waiting for network|connection failed|failed to lookup address|ENOTFOUND|ECONNREFUSED|EAI_AGAIN/i,
    fix: "no network: the worker must reach the engine's API (check DNS, proxy variables such as HTTPS_PROXY, firewall)",
  },
  {
    id: 'permission',
    pattern: /denied tools:|requested permissions|permission to use/i,
    fix: 'the agent was refused tools: give the step `permissions: edit` (or `full`, `ask`) or allow the tool with `allow:`',
  },
];

/** The fix line for a reason, or null when the cause is not known. */
export function fixFor(reason: string): string | null {
  return KNOWN_CAUSES.find((c) => c.pattern.test(reason))?.fix ?? null;
}

/** npm package of each engine's CLI. */
export const ENGINE_PACKAGES = {
  claude: '@anthropic-ai/claude-code',
  codex: '@openai/codex',
} as const;

/** The fix line for an agent binary that is not found. */
export function missingBinaryFix(engine: 'command' | 'claude' | 'codex', file: string): string {
  if (engine === 'command')
    return `put ${file} on the worker's PATH or give its absolute path in argv`;
  return `install the CLI on the worker (npm install -g ${ENGINE_PACKAGES[engine]}) or put ${file} on its PATH`;
}
