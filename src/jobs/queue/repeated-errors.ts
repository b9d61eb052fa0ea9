/**
 * Connection errors of a Redis outage come once per connection and reconnect attempt (several a
 * second, for as long as the outage lasts). The first of each kind is reported at once; its
 * repeats are counted and reported at most once a minute, saying how many there were.
 */
import { type ErrorReporter, errorMessage } from './outcome.ts';

/** How often a repeated error is reported again (with its count). */
export const REPEAT_REPORT_MS = 60_000;
/** Kinds of error remembered at once (the oldest is forgotten first). */
const MAX_KINDS = 64;

/** `report`, with repeats of the same error in the same context reported once per `everyMs`. */
export function quietRepeats(
  report: ErrorReporter,
  everyMs = REPEAT_REPORT_MS,
  now: () => number = Date.now,
): ErrorReporter {
  const seen = new Map<string, { at: number; skipped: number }>();
  return (err, context) => {
    const key = `${context}\n${errorMessage(err)}`;
    const t = now();
    const last = seen.get(key);
    if (last !== undefined && t - last.at < everyMs) {
      last.skipped++;
      return;
    }
    seen.delete(key);
    if (seen.size >= MAX_KINDS) seen.delete(seen.keys().next().value as string);
    seen.set(key, { at: t, skipped: 0 });
    const skipped = last?.skipped ?? 0;
    if (skipped === 0) return report(err, context);
    const seconds = Math.round((t - last!.at) / 1000);
    report(
      new Error(`${errorMessage(err)} (and ${skipped} times more in the last ${seconds} s)`, {
        cause: err,
      }),
      context,
    );
  };
}
