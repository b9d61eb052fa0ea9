import { SECRET_ENV_NAMES } from '../../config.ts';

/** Bridge secrets that never reach an agent, whatever the configuration says. */
export const DEFAULT_SECRET_ENV_NAMES: readonly string[] = SECRET_ENV_NAMES;

/** What an agent's environment is built from. */
export interface AgentEnvInput {
  baseEnv: NodeJS.ProcessEnv;
  agentEnv: Record<string, string>;
  runId: string;
  stepId: string;
  directiveFile: string;
  specFile: string;
  secretEnvNames?: readonly string[];
}

/**
 * The agent's environment: the base env without the bridge's own `PHASEBRIDGE_*` settings and
 * without secrets, plus the agent's env, plus the four PHASEBRIDGE_* step variables. Secrets are
 * removed after merging, so an agent definition cannot re-add one either.
 */
export function buildAgentEnv(input: AgentEnvInput): Record<string, string> {
  const secrets = new Set([...DEFAULT_SECRET_ENV_NAMES, ...(input.secretEnvNames ?? [])]);
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.baseEnv)) {
    // The bridge's configuration is not the agent's business and may hold secrets.
    if (value !== undefined && !name.startsWith('PHASEBRIDGE_')) env[name] = value;
  }
  Object.assign(env, input.agentEnv);
  env.PHASEBRIDGE_RUN_ID = input.runId;
  env.PHASEBRIDGE_STEP_ID = input.stepId;
  env.PHASEBRIDGE_DIRECTIVE_FILE = input.directiveFile;
  env.PHASEBRIDGE_SPEC_FILE = input.specFile;
  for (const name of secrets) delete env[name];
  return env;
}
