/**
 * Turns constraint failures (SQLite's or Postgres's) into domain errors, so a chat user never sees
 * "UNIQUE constraint failed: agents.name" but "an agent named 'x' already exists".
 */
import { ConflictError, InvalidInputError } from '../errors.ts';
import { constraintOf } from './dialects/index.ts';

export { sqliteCode } from './dialects/sqlite/dialect.ts';

/** Messages for one call site; `what` names the thing written, e.g. "an agent named 'x'". */
export interface ConstraintMessages {
  /** Replaces "<what> already exists". */
  unique?: string;
  /** Replaces the generic foreign-key message (SQLite does not say which reference failed). */
  foreignKey?: string;
}

/**
 * Maps a unique or primary-key violation to ConflictError("<what> already exists"), a foreign-key
 * violation to ConflictError, and a CHECK / NOT NULL / type violation to InvalidInputError, on
 * either dialect (src/db/dialects). Anything else is returned unchanged
 * (callers `throw mapSqliteError(err, ...)`).
 */
export function mapSqliteError(err: unknown, what: string, messages?: ConstraintMessages): unknown {
  const failure = constraintOf(err);
  switch (failure?.kind) {
    case 'unique':
      return new ConflictError(messages?.unique ?? `${what} already exists`, { cause: err });
    case 'foreignKey':
      return new ConflictError(
        messages?.foreignKey ??
          `${what} refers to something that does not exist, or something still refers to it`,
        { cause: err },
      );
    case 'invalid': {
      const mapped = new InvalidInputError(`${what} has an invalid value (${failure.detail})`);
      mapped.cause = err;
      return mapped;
    }
    default:
      return err;
  }
}

/** Runs `fn`, mapping a constraint failure it throws as `mapSqliteError` does. */
export async function withConstraintErrors<T>(
  what: string,
  fn: () => Promise<T>,
  messages?: ConstraintMessages,
): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapSqliteError(err, what, messages);
  }
}
