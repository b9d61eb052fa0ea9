/**
 * The LayoutModule interface: everything an on-disk format brings to phasebridge, in one object
 * its folder exports (`src/engine/layouts/<name>/module.ts`) and `./index.ts` lists. The core asks
 * the run's module, never the run's layout name. Every hook is optional; its documented default
 * is what a format without it gets (the native layout has none). Modules stay light: a hook that
 * needs a heavy library or file I/O loads it when called, so the CLI's start-up does not pay.
 */
import type { Command, StartCommand } from '../commands.ts';
import type { RunStartedEvent } from '../events.ts';
import type { RunState, StepState } from '../model.ts';
import type { Workflow } from '../workflow/types.ts';
import type { LayoutProjection } from './port.ts';

/** What a projection factory gets from the process that writes runs. */
export interface ProjectionDeps {
  /** The named agents' display names, engines and models (shown in files that list agents). */
  agentInfo: (id: string) => { name?: string; engine?: string; model?: string } | undefined;
  /** A hand edit turning into a command was seen during a commit: the caller applies it soon. */
  onHandEdit?: (runId: string) => void;
}

/** A projection that holds handles (a registry database) and must be closed with its store. */
export type ClosableProjection = LayoutProjection & { close?(): void };

/** Makes a layout's projection for one process (its agents, its hand-edit listener). */
export type ProjectionFactory = (deps: ProjectionDeps) => ClosableProjection;

/**
 * Rules the engine folds into decide() and evolve() for runs of this layout. Pure: they read
 * states and return data; the engine refuses or records. Default: no rule.
 */
export interface LayoutRules {
  /** Why a start of this layout is refused (the workflow's shape); null when it is fine. */
  startProblem?(command: StartCommand): string | null;
  /** Fields the run starts with besides the engine's own (assigned after them, at runStarted). */
  initialFields?(event: RunStartedEvent): Partial<RunState>;
  /** Checked after every command's rules ran: the refusal text when `after` breaks a law. */
  lawViolation?(before: RunState, after: RunState): string | null;
  /** The question of an `after` checkpoint of `step`; null keeps the engine's wording. */
  afterCheckpointAsk?(state: RunState, step: StepState): string | null;
}

/** Bridge settings a layout may record in a run's workflow at its start. */
export interface StartSettings {
  /** The bridge's default for `coordinator.onComplete`. */
  coordinatorOnComplete?: 'archive' | 'remove' | undefined;
}

/** What starting a run of this layout needs besides the engine's checks. Default: nothing. */
export interface StartHooks {
  /** True when a workspace holds at most one unfinished run of this layout (one state file). */
  onePerWorkspace?: boolean;
  /** Throws (a PhasebridgeError) when the workspace is not ready for a new run. */
  assertReady?(workspace: string): void | Promise<void>;
  /** The workflow as the run records it (bridge defaults written in); default: unchanged. */
  workflow?(workflow: Workflow, settings: StartSettings): Workflow;
  /** The track a start without one follows; default: none. */
  defaultTrack?(workflow: Workflow): string | undefined;
}

/** Where the agent of a step finds its files; default: the native run folder's. */
export interface AgentFiles {
  /** The spec file the agent gets in PHASEBRIDGE_SPEC_FILE. */
  specFile: string;
  /** The directive file the agent gets in PHASEBRIDGE_DIRECTIVE_FILE. */
  directiveFile: string;
  /** True when the layout's projection writes the spec file (the native one is not written). */
  specWrittenByLayout: boolean;
}

/** How the worker runs and logs a step of this layout. Default: native logs only. */
export interface StepHooks {
  /** The agent's spec and directive files; default: `spec.md`, `directive.json` in the run folder. */
  agentFiles?(workspace: string, runId: string): AgentFiles;
  /** True when the step log also records the prompt the agent got. */
  logsPrompt?: boolean;
  /** True when each agent run of a step or trigger gets a row and log in the layout's registry. */
  agentRegistry?: boolean;
}

/** `T` without its `at` (union members one by one). */
type WithoutAt<T> = T extends unknown ? Omit<T, 'at'> : never;

/** A command a hook proposes; the core stamps its time when committing it. */
export type HandEditCommand = WithoutAt<Command>;

/** What a hand edit of the watched file asks of a run. */
export type HandEditCheck =
  | { kind: 'none' }
  /** The file cannot be read: `text` for the people, `reason` for the log; nothing changes. */
  | { kind: 'unreadable'; reason: string; text: string }
  /** An edit no command carries out (`text` says why). */
  | { kind: 'ignored'; text: string }
  /** The commands carrying out the edit (`edit` names it for the log), committed in order. */
  | { kind: 'apply'; edit: string; commands: HandEditCommand[] };

/** A file of the layout that people edit by hand to steer the run. Default: none watched. */
export interface HandEditHooks {
  /** The file the supervisor watches for an edit (its signature is compared between checks). */
  watchedFile(workspace: string): string;
  /** Reads the watched file: what its edit asks of `state` (read-only). Default: nothing. */
  check?(state: RunState): Promise<HandEditCheck>;
  /** The lines `status` shows for an edit no process has applied yet (read-only). Default: none. */
  pendingLines?(state: RunState): Promise<string[]>;
}

/** What happens to the layout's files when the bridge stops with the run unfinished. */
export interface SessionEndHooks {
  /** Marks the session's end in the layout's files at `at`; true when something was written. */
  record(state: RunState, at: string): boolean | Promise<boolean>;
  /** The log line for `count` sessions marked. */
  logLine(count: number): string;
}

/** Rows a format's own tools appended to the log it shares, read from a byte offset. */
export interface FollowTail {
  /** Parsed rows (objects), every field kept. */
  readonly rows: Record<string, unknown>[];
  /** Byte offset after the last complete row read. */
  readonly next: number;
  /** True when the log was shorter than the offset (cut back or replaced). */
  readonly reset: boolean;
}

/**
 * A log the format's own tools write, which a bridge follows read-only (`phasebridge follow`,
 * `bind … --follow`): its new rows are announced in the chats bound to the workspace. Default:
 * nothing to follow. The functions load the format's code when called.
 */
export interface FollowHooks {
  /** The folder holding it, as messages name it (`.codexclaw/`). */
  readonly folder: string;
  /** What is followed, as messages name it (`codexclaw sessions`). */
  readonly what: string;
  /** The short name the audit's detail uses (`codexclaw`). */
  readonly label: string;
  /** What chat announces, for the reply to `bind … --follow`. */
  readonly announces: string;
  /** True when the workspace has the folder (a real one, not a link). */
  present(workspace: string): Promise<boolean>;
  /** Where following starts: after the log's last complete row. */
  end(workspace: string): Promise<number>;
  /** The complete rows appended from `offset` on. */
  tail(workspace: string, offset: number): Promise<FollowTail>;
  /** How one row reads in chat. */
  rowText(workspace: string, row: Record<string, unknown>): string;
}

/** How chat and the CLI word a run of this layout. Default: the engine's words only. */
export interface LayoutWords {
  /** Lines added under the run's outcome in its status message. */
  outcomeLines?(state: RunState): string[];
  /** True when resuming or retrying a blocked run must show why it was blocked first. */
  blockedReasonOnResume?: boolean;
}

/** One on-disk format: its name, its projection and the hooks the core calls. */
export interface LayoutModule<Name extends string = string> {
  /** The layout's name, as workflows, `--layout` and RunState.layout spell it. */
  readonly name: Name;
  /**
   * Loads the factory of the layout's projection (the files it writes from a run's state, and
   * their salvage); absent for the native layout, whose run.json the store always writes.
   */
  projection?(): Promise<ProjectionFactory>;
  /** Rules folded into decide() and evolve(). */
  rules?: LayoutRules;
  /** Preconditions and defaults of a start. */
  start?: StartHooks;
  /** Files and logging of a step's agent. */
  steps?: StepHooks;
  /** A hand-edited file the bridge watches. */
  handEdits?: HandEditHooks;
  /** The session end written when the bridge stops. */
  sessionEnd?: SessionEndHooks;
  /** Words for chat and the CLI. */
  words?: LayoutWords;
  /** A log of the format's own tools that the bridge can follow (the first module with one). */
  follow?: FollowHooks;
}
