import path from 'node:path';
import { promptFileBeside } from '../../engine/prompt-file.ts';
import { InvalidInputError } from '../../errors.ts';
import { permissionArgs } from './permissions.ts';
import type { AgentCommand, AgentDefinition, AgentInvocation } from './types.ts';

/** The invocation fields that shape an argv. */
export type ArgvContext = Pick<
  AgentInvocation,
  'runId' | 'stepId' | 'attempt' | 'workspace' | 'prompt' | 'specFile' | 'directiveFile' | 'logFile'
> & {
  /** MCP config file of the approval server, for `permissions: ask`. */
  mcpConfig?: string;
};

const PROMPT_FILE = '{promptFile}';

/** Path of the prompt file for an attempt: `<logdir>/prompt-<step>-<attempt>.md`. */
export function promptFilePath(ctx: Pick<ArgvContext, 'logFile' | 'stepId' | 'attempt'>): string {
  return promptFileBeside(ctx.logFile, ctx.stepId, ctx.attempt);
}

function modelArgs(agent: AgentDefinition): string[] {
  return agent.model ? ['--model', agent.model] : [];
}

/** Path of the approval server's MCP config for an attempt: `<logdir>/mcp-<step>-<attempt>.json`. */
export function mcpConfigPath(ctx: Pick<ArgvContext, 'logFile' | 'stepId' | 'attempt'>): string {
  const step = ctx.stepId.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(path.dirname(ctx.logFile), `mcp-${step}-${ctx.attempt}.json`);
}

/** The posture's engine flags (none when the definition has no posture). */
function postureArgs(agent: AgentDefinition, mcpConfig: string | undefined): string[] {
  return agent.permissions ? permissionArgs(agent.engine, agent.permissions, mcpConfig) : [];
}

/** The engine's argv before placeholders are substituted. */
function rawArgv(agent: AgentDefinition, mcpConfig: string | undefined): string[] {
  const given = agent.argv;
  if (agent.engine === 'command' || (given.length > 0 && !given[0]!.startsWith('-'))) {
    return [...given];
  }
  if (agent.engine === 'claude') {
    return [
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      ...postureArgs(agent, mcpConfig),
      ...modelArgs(agent),
      ...given,
    ];
  }
  // `-` makes codex read the prompt from stdin. The workspace was chosen by whoever bound it, so
  // codex's own "is this a git repository I trust" check would only refuse non-git workspaces.
  return [
    'codex',
    'exec',
    '--json',
    '--skip-git-repo-check',
    ...postureArgs(agent, mcpConfig),
    ...modelArgs(agent),
    ...given,
    '-',
  ];
}

/**
 * Builds the process to start for an agent. The prompt never goes into argv (it would show in
 * `ps`): `{prompt}` is refused; `{promptFile}`, `{specFile}`, `{directiveFile}`, `{workspace}`,
 * `{runId}`, `{stepId}` and `{attempt}` are substituted. For `command` agents with
 * `promptVia: 'file'` the prompt file path is appended unless argv has `{promptFile}`; `claude`
 * and `codex` always read the prompt on stdin (a path argument would be taken as the prompt).
 * Their permission posture becomes engine flags through POSTURE_FLAGS (permissions.ts); a full
 * argv override (not starting with a flag) is taken as given.
 * Throws InvalidInputError for an unusable definition.
 */
export function buildArgv(agent: AgentDefinition, inv: ArgvContext): AgentCommand {
  const raw = rawArgv(agent, inv.mcpConfig);
  if (raw.length === 0 || raw[0] === '') {
    throw new InvalidInputError(`agent ${agent.name}: argv is empty; give the binary as argv[0]`);
  }
  if (raw.some((a) => a.includes('{prompt}'))) {
    throw new InvalidInputError(
      `agent ${agent.name}: {prompt} is not allowed in argv (it would be visible in ps); use {promptFile} or stdin`,
    );
  }
  const viaFile = agent.promptVia === 'file';
  const mentionsFile = raw.some((a) => a.includes(PROMPT_FILE));
  const promptFile = viaFile || mentionsFile ? promptFilePath(inv) : null;
  const values: Record<string, string> = {
    '{promptFile}': promptFile ?? '',
    '{specFile}': inv.specFile,
    '{directiveFile}': inv.directiveFile,
    '{workspace}': inv.workspace,
    '{runId}': inv.runId,
    '{stepId}': inv.stepId,
    '{attempt}': String(inv.attempt),
  };
  const substituted = raw.map((a) => a.replace(/\{[A-Za-z]+\}/g, (m) => values[m] ?? m));
  const fileOnly = viaFile && agent.engine === 'command';
  if (fileOnly && !mentionsFile && promptFile !== null) substituted.push(promptFile);
  const [file, ...args] = substituted;
  return { file: file!, args, stdin: fileOnly ? null : inv.prompt, promptFile };
}
