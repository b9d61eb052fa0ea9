/**
 * Turns SQLite constraint failures into domain errors, so a chat user never sees
 * "UNIQUE constraint failed: agents.name" but "an agent named 'x' already exists".
 */
import { ConflictError, InvalidInputError } from '../errors.ts';

/** Messages for one call site; `what` names the thing written, e.g. "an agent named 'x'". */
export interface ConstraintMessages {
  /** Replaces "<what> already exists". */
  unique?: string;
  /** Replaces the generic foreign-key message (SQLite does not say which reference failed). */
  foreignKey?: string;
}

/** The `code` of a better-sqlite3 SqliteError (e.g. 'SQLITE_CONSTRAINT_UNIQUE'), else undefined. */
export function sqliteCode(err: unknown): string | undefined {
  if (!(err instanceof Error)) return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : undefined;
}

/**
 * Maps a unique or primary-key violation to ConflictError("<what> already exists"), a foreign-key
 * violation to ConflictError, and a CHECK / NOT NULL / type violation to InvalidInputError.
 * Anything else is returned unchanged (callers `throw mapSqliteError(err, ...)`).
 */
export function mapSqliteError(err: unknown, what: string, messages?: ConstraintMessages): unknown {
  switch (sqliteCode(err)) {
    case 'SQLITE_CONSTRAINT_UNIQUE':
    case 'SQLITE_CONSTRAINT_PRIMARYKEY':
      return new ConflictError(messages?.unique ?? `${what} already exists`, { cause: err });
    case 'SQLITE_CONSTRAINT_FOREIGNKEY':
      return new ConflictError(
        messages?.foreignKey ??
          `${what} refers to something that does not exist, or something still refers to it`,
        { cause: err },
      );
    case 'SQLITE_CONSTRAINT_CHECK':
    case 'SQLITE_CONSTRAINT_NOTNULL':
    case 'SQLITE_CONSTRAINT_DATATYPE': {
      const detail = (err as Error).message.replace(/^.*constraint failed: /i, '');
      const mapped = new InvalidInputError(`${what} has an invalid value (${detail})`);
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
