/**
 * The agent definition that resumes an engine's own session: Claude Code `--resume <id>`,
 * Codex `codex exec resume <id>`. Only for argvs that extend the default (flags): a full
 * override is the user's own command line, which phasebridge does not rewrite.
 */
import type { AgentDefinition } from './types.ts';

/** The definition resuming `session`, or null when this agent cannot be resumed. */
export function resumeAgent(agent: AgentDefinition, session: string): AgentDefinition | null {
  const extendsDefault = agent.argv.length === 0 || agent.argv[0]!.startsWith('-');
  if (!extendsDefault) return null;
  const env = { ...agent.env, PHASEBRIDGE_SESSION_ID: session };
  if (agent.engine === 'claude')
    return { ...agent, env, argv: [...agent.argv, '--resume', session] };
  if (agent.engine !== 'codex') return null;
  // A full argv (binary first) is taken as given by buildArgv; `-` reads the message from stdin.
  const model = agent.model ? ['--model', agent.model] : [];
  const argv = ['codex', 'exec', 'resume', session, '--json', ...model, ...agent.argv, '-'];
  return { ...agent, env, argv };
}
