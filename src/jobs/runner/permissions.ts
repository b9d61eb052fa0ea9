/**
 * The permission posture of an agent step, and THE table that maps it onto each engine's own
 * flags (docs/permissions.md shows the same table). Postures: `read-only` (look, never change),
 * `edit` (change files in the workspace), `full` (anything; an admin must allow it per
 * workspace) and `ask` (each tool request is asked in the run's chat thread; Claude only).
 */

import { formatDuration } from '../../engine/workflow/duration.ts';
import type { AgentPermissions, PermissionPosture } from '../../engine/workflow/types.ts';
import { InvalidInputError } from '../../errors.ts';

export {
  type AgentPermissions,
  type PermissionPosture,
  POSTURES,
} from '../../engine/workflow/types.ts';

/** Name of the MCP tool Claude asks in `ask` (server `phasebridge`, tool `approve`). */
export const ASK_TOOL = 'mcp__phasebridge__approve';

/**
 * THE posture table: posture → flags, per engine. `null` = the engine cannot do it (refused
 * with a clear message, never silently weakened or widened). `{mcpConfig}` is replaced by the
 * path of the per-step MCP config of the approval server.
 */
export const POSTURE_FLAGS: Readonly<
  Record<'claude' | 'codex', Readonly<Record<PermissionPosture, readonly string[] | null>>>
> = {
  claude: {
    'read-only': ['--permission-mode', 'plan'],
    edit: ['--permission-mode', 'acceptEdits'],
    full: ['--permission-mode', 'bypassPermissions'],
    ask: [
      '--permission-mode',
      'default',
      '--mcp-config',
      '{mcpConfig}',
      '--permission-prompt-tool',
      ASK_TOOL,
    ],
  },
  codex: {
    'read-only': ['--sandbox', 'read-only'],
    edit: ['--sandbox', 'workspace-write'],
    full: ['--sandbox', 'danger-full-access'],
    // `codex exec` has no approval relay for non-interactive runs (its --approve-for-me is a
    // model review, not a person): Codex steps use sandbox modes only.
    ask: null,
  },
};

/** Engines whose tool lists phasebridge can pass (`--allowedTools` / `--disallowedTools`). */
const TOOL_LISTS = { claude: true, codex: false, command: false } as const;

/** Step ids or agent names that plan or review: read-only unless told otherwise. */
const LOOKING_ONLY = /plan|review|audit|analy[sz]|inspect/i;

/**
 * The default posture of a step: the safest that lets it work — `read-only` for planning and
 * review steps (by step id or agent name), `edit` for the rest.
 */
export function defaultPosture(stepId: string, agentName: string): PermissionPosture {
  return LOOKING_ONLY.test(stepId) || LOOKING_ONLY.test(agentName) ? 'read-only' : 'edit';
}

/**
 * Checks that `engine` can honour `perms`; InvalidInputError otherwise. `command` agents get no
 * flags (phasebridge cannot enforce anything on an arbitrary program) but may not ask.
 */
export function assertSupported(
  engine: 'command' | 'claude' | 'codex',
  perms: AgentPermissions,
  who: string,
): void {
  if (perms.posture === 'ask' && engine !== 'claude') {
    throw new InvalidInputError(
      `${who}: permissions "ask" needs the claude engine (codex runs non-interactively with sandbox modes only; use read-only, edit or full)`,
    );
  }
  const lists = (perms.allow?.length ?? 0) + (perms.deny?.length ?? 0) > 0;
  if (lists && !TOOL_LISTS[engine]) {
    throw new InvalidInputError(
      `${who}: allow/deny tool lists are supported by the claude engine only (${engine} has none)`,
    );
  }
}

/** The engine flags for `perms` (after assertSupported); `mcpConfig` fills `{mcpConfig}`. */
export function permissionArgs(
  engine: 'command' | 'claude' | 'codex',
  perms: AgentPermissions,
  mcpConfig = '',
): string[] {
  if (engine === 'command') return [];
  const flags = POSTURE_FLAGS[engine][perms.posture];
  if (flags === null) {
    throw new InvalidInputError(`permissions "${perms.posture}" is not possible with ${engine}`);
  }
  const out = flags.map((f) => (f === '{mcpConfig}' ? mcpConfig : f));
  // One value per flag occurrence: the flags are variadic, and a tool spec may hold spaces.
  for (const tool of perms.allow ?? []) out.push('--allowedTools', tool);
  for (const tool of perms.deny ?? []) out.push('--disallowedTools', tool);
  return out;
}

/** Short text for chat and CLI: "read-only", "full ⚠", "edit (+Bash(npm test); −WebFetch)". */
export function describePermissions(perms: AgentPermissions): string {
  const lists: string[] = [];
  if (perms.allow?.length) lists.push(`+${perms.allow.join(', +')}`);
  if (perms.deny?.length) lists.push(`−${perms.deny.join(', −')}`);
  if (perms.fourEyes) lists.push('four-eyes');
  if (perms.expiresInMs !== undefined)
    lists.push(`requests expire in ${formatDuration(perms.expiresInMs)}`);
  const head = perms.posture === 'full' ? 'full access ⚠' : perms.posture;
  return lists.length > 0 ? `${head} (${lists.join('; ')})` : head;
}

/**
 * The posture a step runs with: the step's own (workflow `permissions:`), else the named
 * agent's, else {@link defaultPosture}.
 */
export function effectivePermissions(
  step: AgentPermissions | undefined,
  agent: AgentPermissions | undefined,
  stepId: string,
  agentName: string,
): AgentPermissions {
  const chosen = step ?? agent;
  return chosen ? structuredClone(chosen) : { posture: defaultPosture(stepId, agentName) };
}
