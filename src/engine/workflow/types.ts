/**
 * The resolved shape of a workflow: what the engine runs. The YAML file schema (durations as
 * text, promptFile) lives in schema.ts; load.ts turns one into the other.
 */
import type { Layout } from '../layouts/index.ts';
import type { StepTasks } from '../tasks/types.ts';

/** Permission postures of an agent step, safest first (docs/permissions.md). */
export const POSTURES = ['read-only', 'edit', 'full', 'ask'] as const;

/** How much an agent step may do: look, edit the workspace, anything, or ask in chat. */
export type PermissionPosture = (typeof POSTURES)[number];

/** A posture with optional tool lists (engines that support them: Claude). */
export interface AgentPermissions {
  posture: PermissionPosture;
  /** Tools always allowed, in the engine's syntax, e.g. `Bash(npm test)`, `Read`. */
  allow?: string[];
  /** Tools always refused, e.g. `Bash(git push:*)`, `WebFetch`. */
  deny?: string[];
  /** `ask` only: the run's starter may not allow its tool requests (Deny stays open to all). */
  fourEyes?: boolean;
  /** `ask` only: how long a tool request waits before it is denied (default 10 minutes). */
  expiresInMs?: number;
}

/** What a completed coordinator session's `.coordinator/` becomes (seed 004's cleanup options). */
export type CoordinatorOnComplete = 'archive' | 'remove';

/** Where a run's state is written on disk: one of the layouts of `../layouts/index.ts`. */
export type { Layout };

/** What happens when a checkpoint is not answered in time. */
export type ExpiryAction = 'reject' | 'approve' | 'keep';

/** A human gate declared on a step, before it runs or after it finishes. */
export interface StepCheckpoint {
  when: 'before' | 'after';
  /** Distinct approvers needed. */
  approvals: number;
  /** When true the run's starter cannot approve. */
  fourEyes: boolean;
  expiresInMs?: number;
  onExpiry: ExpiryAction;
  /** False turns the Request changes answer off for this checkpoint (default: offered). */
  requestChanges?: boolean;
}

/** A bounded loop back to an earlier step. */
export interface StepLoop {
  /** Id of an earlier step. */
  backTo: string;
  /**
   * How many times this step may send the run back (its loop directives and Request changes
   * together, default 3 without a loop); counters never exceed it.
   */
  max: number;
}

/** Retry policy for a failing step: `count` extra attempts, exponential backoff. */
export interface StepRetries {
  count: number;
  backoffMs: number;
}

/** One step of a workflow, with its prompt text already resolved. */
export interface WorkflowStep {
  id: string;
  agent: string;
  /** The prompt; with chained prompts, the first of them. */
  prompt: string;
  /** Chained prompts (two or more), run in order in one agent session; `prompt` is chain[0]. */
  chain?: string[];
  /** The file the prompt was read from, relative to the workflow file, when not inline. */
  promptFile?: string;
  checkpoint?: StepCheckpoint;
  loop?: StepLoop;
  retries?: StepRetries;
  timeoutMs?: number;
  /** A completed executeOnce step is not re-run when a loop passes over it. */
  executeOnce?: boolean;
  /** The step runs only when the run's selected track is one of these. */
  tracks?: string[];
  /** The step runs only when every listed condition is selected. */
  conditions?: string[];
  /** The step's permission posture; absent = the agent's, else the default for the step. */
  permissions?: AgentPermissions;
  /**
   * A parallel `tasks` step: one job per task of the list file, `prompt` given to each task's
   * agent with the task's id and title.
   */
  tasks?: StepTasks;
  /** Labels every worker running this step must carry. */
  runsOn?: string[];
  /** Workspace-relative files the step produces for review; its approval is bound to them. */
  artifacts?: string[];
}

/** A validated workflow; `version` is a content hash so a run records exactly what it ran. */
export interface Workflow {
  id: string;
  /** First 12 hex digits of the sha256 of the file (and its prompt files). */
  version: string;
  name?: string;
  description?: string;
  layout?: Layout;
  tracks?: string[];
  conditions?: string[];
  /** The agents `trigger` directives may start; when absent, any agent the bridge knows. */
  subagents?: string[];
  /** Coordinator-layout options (`onComplete`: archive `.coordinator/` or remove it). */
  coordinator?: { onComplete: CoordinatorOnComplete };
  steps: WorkflowStep[];
  /** File name it was loaded from (e.g. "demo.workflow.yaml"); CodeMachine's activeTemplate. */
  file?: string;
}
