import type { Directive } from '../../engine/directive.ts';
import type { AgentPermissions } from './permissions.ts';

/** A named agent as configured: which engine it speaks and how to start it. */
export interface AgentDefinition {
  name: string;
  /** `claude` and `codex` get default argvs and telemetry parsing; `command` runs argv as given. */
  engine: 'command' | 'claude' | 'codex';
  /**
   * `command`: the full argv (argv[0] is the binary). `claude`/`codex`: empty = the default argv;
   * starting with a flag (`-…`) = extra flags added to the default; otherwise a full override.
   */
  argv: string[];
  model?: string;
  env: Record<string, string>;
  timeoutMs?: number;
  /** `stdin` (default) or `file`: the prompt is written to `<logdir>/prompt-<step>-<attempt>.md`. */
  promptVia?: 'stdin' | 'file';
  /** The permission posture, resolved (step over agent over default) before the job runs. */
  permissions?: AgentPermissions;
}

/** One execution of an agent for one step attempt of a run. */
export interface AgentInvocation {
  runId: string;
  stepId: string;
  attempt: number;
  /** The run's workspace; the agent's cwd. */
  workspace: string;
  prompt: string;
  specFile: string;
  directiveFile: string;
  /** The step's log; output is appended here. */
  logFile: string;
  /** More logs that receive the same output (e.g. CodeMachine's `logs/agent-*.log`). */
  extraLogFiles?: string[];
  /** Write the full prompt to the logs before the output (CodeMachine's agent logs hold it). */
  logPrompt?: boolean;
  /** Wall-clock limit; 0, negative or non-finite means none. */
  timeoutMs: number;
  /** Time between SIGTERM and SIGKILL to the process group; default 5000. */
  killGraceMs?: number;
  /** Run the agent this much below our CPU priority (a `nice` increment; default 0). */
  nice?: number;
  /** Bytes of output written to the logs before truncation; default 8 MiB. */
  outputCapBytes?: number;
  signal?: AbortSignal;
  /** Environment the agent's env is derived from; default `process.env`. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Env names the agent must never see (the bridge's configured secrets). */
  secretEnvNames?: readonly string[];
  /**
   * How Claude starts phasebridge's approval MCP server for `permissions: ask` (`--run`,
   * `--step`, `--attempt` are appended); without it an `ask` step fails before it starts.
   */
  approvalServer?: { command: string; args: string[]; env: Record<string, string> };
  onSpawn?(pid: number): void;
  onProgress?(text: string): void;
  /** The engine announced its own session id (Claude's `session_id`, Codex's thread id); once. */
  onSession?(sessionId: string): void;
}

/** Token usage and cost reported by the agent's engine; zeros when it reported none. */
export interface AgentTelemetry {
  /** All prompt tokens, cached ones included. */
  tokensIn: number;
  tokensOut: number;
  /** The part of `tokensIn` served from the prompt cache. */
  cachedTokens: number;
  costUsd: number;
}

/** What happened when an agent ran; the engine, not the runner, applies it to the run. */
export interface AgentOutcome {
  /** Exit 0, no signal, no timeout or cancel, and a valid (or absent) directive. */
  ok: boolean;
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  cancelled: boolean;
  /** The directive read after exit; null when it was invalid or the agent never ran. */
  directive: Directive | null;
  /** Human reason when !ok, e.g. "exit code 3", "timed out after 30s". */
  failure?: string;
  telemetry: AgentTelemetry;
  /** The last ~20 output lines (stdout and stderr interleaved). */
  outputTail: string[];
  /** True when output went past the cap and the logs were cut. */
  outputTruncated: boolean;
  durationMs: number;
  /** The engine's own session id, when its output announced one (what its resume flag takes). */
  engineSessionId?: string;
}

/** The process to start: binary, arguments, and what to write on stdin (null = nothing). */
export interface AgentCommand {
  file: string;
  args: string[];
  stdin: string | null;
  /** Where the prompt must be written before spawn, when the argv refers to it; else null. */
  promptFile: string | null;
}
