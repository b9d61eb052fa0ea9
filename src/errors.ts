/**
 * The one error hierarchy of phasebridge. Every error a user can see carries a stable string
 * code; each code maps once to a CLI exit code, a chat reply and a log level (see `describeError`).
 */

/** Stable codes: scripts and tests match on these, never on messages. */
export type ErrorCode =
  | 'CONFIG'
  | 'UNAUTHORIZED'
  | 'ILLEGAL_TRANSITION'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'RATE_LIMITED'
  | 'PLATFORM'
  | 'AGENT_FAILED'
  | 'INVALID_INPUT'
  | 'CORRUPT_STATE'
  | 'RESOURCE'
  | 'CHAT_UNREACHABLE';

/** Base class: a message meant for a human plus a stable code. */
export class PhasebridgeError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem found in configuration, with the fix to apply. */
export interface ConfigProblem {
  readonly path: string;
  readonly problem: string;
  readonly fix: string;
}

/** The configuration is invalid; `problems` lists every problem found, not just the first. */
export class ConfigError extends PhasebridgeError {
  readonly problems: readonly ConfigProblem[];
  constructor(problems: readonly ConfigProblem[]) {
    const lines = problems.map((p) => `  - ${p.path}: ${p.problem}. Fix: ${p.fix}`);
    super('CONFIG', `invalid configuration (${problems.length} problem(s)):\n${lines.join('\n')}`);
    this.problems = problems;
  }
}

/** The actor may not do this. Messages never reveal details of the target. */
export class UnauthorizedError extends PhasebridgeError {
  constructor(message: string) {
    super('UNAUTHORIZED', message);
  }
}

/** A command does not apply to the current state of a run; the message says the state and why. */
export class IllegalTransitionError extends PhasebridgeError {
  constructor(message: string) {
    super('ILLEGAL_TRANSITION', message);
  }
}

/** A named thing (run, agent, workflow, binding) does not exist. */
export class NotFoundError extends PhasebridgeError {
  constructor(message: string) {
    super('NOT_FOUND', message);
  }
}

/** A uniqueness or reference rule would be broken. */
export class ConflictError extends PhasebridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CONFLICT', message, options);
  }
}

/** A platform asked us to slow down; `retryAfterMs` is how long it asked us to wait. */
export class RateLimitedError extends PhasebridgeError {
  readonly retryAfterMs: number;
  readonly platform: string;
  constructor(platform: string, retryAfterMs: number, options?: { cause?: unknown }) {
    super('RATE_LIMITED', `${platform} rate limit: retry after ${retryAfterMs} ms`, options);
    this.platform = platform;
    this.retryAfterMs = retryAfterMs;
  }
}

/** A chat platform's API failed in a way that is not a rate limit. */
export class PlatformError extends PhasebridgeError {
  readonly platform: string;
  constructor(platform: string, message: string, options?: { cause?: unknown }) {
    super('PLATFORM', `${platform}: ${message}`, options);
    this.platform = platform;
  }
}

/** An agent process failed: missing binary, non-zero exit, timeout or an invalid directive. */
export class AgentFailedError extends PhasebridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('AGENT_FAILED', message, options);
  }
}

/** Input from a user or a file is malformed (bad arguments, a bad workflow file). */
export class InvalidInputError extends PhasebridgeError {
  constructor(message: string) {
    super('INVALID_INPUT', message);
  }
}

/** State on disk cannot be read safely; the run is blocked rather than reset. */
export class CorruptStateError extends PhasebridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('CORRUPT_STATE', message, options);
  }
}

/**
 * The machine refused something phasebridge needs: disk space, a permission, a folder, a port.
 * The message names the path (or port) and the fix; see `src/fs-errors.ts`.
 */
export class ResourceError extends PhasebridgeError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('RESOURCE', message, options);
  }
}

/**
 * The bridge is stopping: a message it was waiting to deliver stays queued (a row in bridge.db)
 * for its next start. Whoever waited must not count the message as delivered (the run feed keeps
 * its cursor, so the next start replays what this cut short).
 */
export class StoppingError extends ResourceError {
  constructor(message = 'the bridge is stopping: the message stays queued for its next start') {
    super(message);
  }
}

/** Where a refusal applies: the whole chat, or only the thread/topic inside it. */
export type RefusalScope = 'chat' | 'thread';

/**
 * A platform refuses us in one chat until a person there changes something: the bot was removed
 * or blocked, lost a permission, the channel was archived or deleted, the thread archived or the
 * topic closed (`scope: 'thread'`: the chat itself may still work), or the chat moved to a new id
 * (`movedTo`, a Telegram group upgraded to a supergroup). Built only by the adapters' errors.ts.
 */
export class ChatUnreachableError extends PhasebridgeError {
  readonly platform: string;
  /** The platform's own short reason (`bot_kicked`, `not_in_channel`, `missing_access`...). */
  readonly reason: string;
  readonly scope: RefusalScope;
  /** The chat ref the chat now has, when it moved. */
  readonly movedTo: string | undefined;
  constructor(
    platform: string,
    reason: string,
    options: { scope?: RefusalScope; movedTo?: string; detail?: string; cause?: unknown } = {},
  ) {
    const detail = options.detail ? ` (${options.detail})` : '';
    super('CHAT_UNREACHABLE', `${platform} refused the chat: ${reason}${detail}`, {
      cause: options.cause,
    });
    this.platform = platform;
    this.reason = reason;
    this.scope = options.scope ?? 'chat';
    this.movedTo = options.movedTo;
  }
}

/** How each code surfaces: CLI exit code, log level, and whether chat may show the message. */
export interface ErrorSurface {
  readonly exitCode: number;
  readonly logLevel: 'warn' | 'error';
  readonly chatReply: string;
}

const SURFACES: Record<ErrorCode, Omit<ErrorSurface, 'chatReply'> & { publicMessage: boolean }> = {
  CONFIG: { exitCode: 1, logLevel: 'error', publicMessage: false },
  UNAUTHORIZED: { exitCode: 1, logLevel: 'warn', publicMessage: true },
  ILLEGAL_TRANSITION: { exitCode: 1, logLevel: 'warn', publicMessage: true },
  NOT_FOUND: { exitCode: 1, logLevel: 'warn', publicMessage: true },
  CONFLICT: { exitCode: 1, logLevel: 'warn', publicMessage: true },
  RATE_LIMITED: { exitCode: 1, logLevel: 'warn', publicMessage: false },
  PLATFORM: { exitCode: 1, logLevel: 'error', publicMessage: false },
  AGENT_FAILED: { exitCode: 1, logLevel: 'warn', publicMessage: true },
  INVALID_INPUT: { exitCode: 2, logLevel: 'warn', publicMessage: true },
  CORRUPT_STATE: { exitCode: 1, logLevel: 'error', publicMessage: true },
  RESOURCE: { exitCode: 1, logLevel: 'error', publicMessage: true },
  CHAT_UNREACHABLE: { exitCode: 1, logLevel: 'warn', publicMessage: false },
};

/** Maps any thrown value to how it is shown; unknown errors never leak their text to chat. */
export function describeError(err: unknown): ErrorSurface {
  if (err instanceof PhasebridgeError) {
    const s = SURFACES[err.code];
    return {
      exitCode: s.exitCode,
      logLevel: s.logLevel,
      chatReply: s.publicMessage ? err.message : `Something went wrong (${err.code}).`,
    };
  }
  return { exitCode: 1, logLevel: 'error', chatReply: 'Something went wrong (INTERNAL).' };
}

/** True when `err` is a phasebridge error with the given code. */
export function hasCode(err: unknown, code: ErrorCode): boolean {
  return err instanceof PhasebridgeError && err.code === code;
}
