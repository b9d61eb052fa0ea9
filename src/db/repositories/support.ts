/** Small helpers shared by the repositories: the clock and JSON columns. */
import { CorruptStateError } from '../../errors.ts';

/** Returns the current time in ms since the epoch; injected so tests control time. */
export type Clock = () => number;

/** Options every repository takes. */
export interface RepoOptions {
  /** Time source for *_at columns (default Date.now). */
  now?: Clock;
}

/** Parses a *_json column; a value that is not valid JSON means bridge.db was damaged. */
export function parseJsonColumn<T>(text: string, where: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (err) {
    throw new CorruptStateError(`bridge.db: ${where} is not valid JSON`, { cause: err });
  }
}

/** Quotes a user-given name for messages: agent 'x'. */
export function quoted(value: string | number): string {
  return `'${String(value)}'`;
}
