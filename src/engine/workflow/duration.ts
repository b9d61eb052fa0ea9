/** Durations in workflow files: an integer and a unit, e.g. '500ms', '30s', '5m', '2h', '1d'. */

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

const DURATION = /^([0-9]+)(ms|s|m|h|d)$/;

/** What a valid duration looks like, for error messages. */
export const DURATION_HINT = 'use an integer and a unit: 500ms, 30s, 5m, 2h or 1d';

/** Milliseconds of a duration text, or null when it is not one (zero and negatives are not). */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (!m) return null;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}

/** Shortest text for a whole number of milliseconds (the inverse of parseDuration). */
export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    if (ms >= UNIT_MS[unit] && ms % UNIT_MS[unit] === 0) return `${ms / UNIT_MS[unit]}${unit}`;
  }
  return `${ms}ms`;
}
