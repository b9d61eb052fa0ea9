/** The agent runner: spawns one agent attempt and reports its outcome. */
export { type ArgvContext, buildArgv, promptFilePath } from './agent-argv.ts';
export { readDirectiveFile, resetDirectiveFile } from './directive-file.ts';
export { buildAgentEnv, DEFAULT_SECRET_ENV_NAMES } from './env.ts';
export { DEFAULT_OUTPUT_CAP_BYTES } from './output-sink.ts';
export { DEFAULT_KILL_GRACE_MS, runAgent } from './run-agent.ts';
export { parseClaudeResultLine } from './telemetry/claude.ts';
export { parseCodexTurnLine } from './telemetry/codex.ts';
export type {
  AgentCommand,
  AgentDefinition,
  AgentInvocation,
  AgentOutcome,
  AgentTelemetry,
} from './types.ts';
