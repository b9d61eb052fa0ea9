/**
 * The control channel between the `phasebridge` CLI and a bridge running on the same
 * PHASEBRIDGE_HOME: a unix socket (mode 0600, in the 0700 home) speaking one JSON object a line.
 * One request per connection; `follow` keeps its connection open and streams updates.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import type { RunState } from '../engine/model.ts';
import type { CommitResult } from '../engine/store/types.ts';
import type { ErrorCode } from '../errors.ts';
import type {
  CommandInput,
  RunUpdate,
  StartRunInput,
  StepProgress,
} from '../jobs/orchestrator/index.ts';

/** Longest unix socket path Linux accepts (sun_path is 108 bytes with its NUL). */
const MAX_SOCKET_PATH = 107;

/**
 * Where the bridge of `home` listens: `<home>/control.sock`, or, when that path is too long for
 * a unix socket, a name derived from the home in the system's temp folder.
 */
export function controlSocketPath(home: string): string {
  const inHome = path.join(path.resolve(home), 'control.sock');
  if (Buffer.byteLength(inHome) <= MAX_SOCKET_PATH) return inHome;
  const digest = createHash('sha256').update(path.resolve(home)).digest('hex').slice(0, 16);
  return path.join(os.tmpdir(), `phasebridge-${digest}.sock`);
}

/** What the CLI asks. */
export type ControlRequest =
  | { op: 'hello' }
  | { op: 'startRun'; input: StartRunInput }
  | { op: 'command'; runId: string; key: string; command: CommandInput }
  | { op: 'getRun'; runId: string }
  | { op: 'follow' }
  | { op: 'toolWait'; id: string };

/**
 * Where a tool approval (`permissions: ask`) stands, as the bridge answers `toolWait`: the
 * approval server reads the decision itself from bridge.db once told it is there.
 */
export type ToolWaitOutcome = 'decided' | 'unknown';

/**
 * What the bridge does for the approval MCP server: show request `id` in its chats now, and
 * resolve once it is decided (or expired); `signal` aborts the wait when the asker hangs up.
 */
export interface ToolApprovalHook {
  awaitDecision(id: string, signal: AbortSignal): Promise<ToolWaitOutcome>;
}

/** Who answers: the bridge's pid and when it started. */
export interface BridgeHello {
  pid: number;
  startedAt: string;
}

/** A refusal, as the error's stable code and its message. */
export interface ControlFailure {
  ok: false;
  error: { code: ErrorCode | 'INTERNAL'; message: string };
}

/** The answer to each request (one line; `follow` then streams {@link ControlEvent} lines). */
export type ControlReply =
  | ({ ok: true; op: 'hello' } & BridgeHello)
  | { ok: true; op: 'startRun'; state: RunState }
  | { ok: true; op: 'command'; result: CommitResult }
  | { ok: true; op: 'getRun'; state: RunState }
  | { ok: true; op: 'follow' }
  | { ok: true; op: 'toolWait'; outcome: ToolWaitOutcome }
  | ControlFailure;

/** One streamed line of `follow`. */
export type ControlEvent =
  | { event: 'update'; update: RunUpdate }
  | { event: 'progress'; progress: StepProgress };
