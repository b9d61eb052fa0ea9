/**
 * One ledger line = one committed command: `{v:1, seq, key, at, command, actor, events, effects}`.
 * A whole command is one line, so a torn write drops a whole command, never half of one.
 * Pure: serialising and validating lines, no I/O. Generic over the event/effect types so the
 * file format does not depend on the engine's evolving unions.
 */

/** Who sent the command (the engine's `Actor`, structurally). */
export interface LedgerActor {
  id: string;
  name?: string;
}

/** One committed command with the events it produced. */
export interface LedgerEntry<E = unknown, F = unknown> {
  /** Format version of the line. */
  v: 1;
  /** The run's `seq` (events applied) after this line's events. */
  seq: number;
  /** Idempotency key of the command; unique within a run's ledger. */
  key: string;
  /** The command's own time (ISO). */
  at: string;
  /** The command's `type`. */
  command: string;
  /** Who sent it. */
  actor: LedgerActor;
  /** Events the command produced, in order (may be empty). */
  events: E[];
  /**
   * Effects decide() returned, kept so a retried key after a crash still hands the caller its
   * jobs to enqueue (job ids are idempotent, so enqueueing twice is harmless).
   */
  effects: F[];
}

/** Result of validating one ledger line. */
export type LineParse<E, F> =
  | { ok: true; entry: LedgerEntry<E, F> }
  | { ok: false; reason: string };

/** Serialises an entry to one line, newline included. */
export function formatLedgerLine<E, F>(entry: LedgerEntry<E, F>): string {
  return `${JSON.stringify(entry)}\n`;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

/** Checks the shape of one line (without its newline); events/effects are checked shallowly. */
export function parseLedgerLine<E = unknown, F = unknown>(text: string): LineParse<E, F> {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return { ok: false, reason: `not valid JSON (${(err as Error).message})` };
  }
  if (!isRecord(raw)) return { ok: false, reason: 'not a JSON object' };
  if (raw.v !== 1) return { ok: false, reason: `unknown format version ${JSON.stringify(raw.v)}` };
  const { seq, key, at, command, actor, events } = raw;
  const effects = raw.effects ?? [];
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) {
    return { ok: false, reason: 'seq is not a non-negative integer' };
  }
  if (typeof key !== 'string' || key === '') return { ok: false, reason: 'key is missing' };
  if (typeof at !== 'string') return { ok: false, reason: 'at is missing' };
  if (typeof command !== 'string' || command === '') {
    return { ok: false, reason: 'command is missing' };
  }
  if (!isRecord(actor) || typeof actor.id !== 'string') {
    return { ok: false, reason: 'actor.id is missing' };
  }
  if (!Array.isArray(events) || !events.every((e) => isRecord(e) && typeof e.type === 'string')) {
    return { ok: false, reason: 'events is not a list of typed objects' };
  }
  if (!Array.isArray(effects) || !effects.every(isRecord)) {
    return { ok: false, reason: 'effects is not a list of objects' };
  }
  const entry = { v: 1, seq, key, at, command, actor, events, effects } as unknown as LedgerEntry<
    E,
    F
  >;
  return { ok: true, entry };
}
