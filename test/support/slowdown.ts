/**
 * One factor for every deadline of the suite: PHASEBRIDGE_TEST_SLOWDOWN (default 1; CI on a loaded
 * 2-core machine may set 3). Deadlines only bound waits for an event or a condition, so a larger
 * factor makes a slow machine pass and never makes a broken test pass (it fails later, not never).
 */

/** The factor from PHASEBRIDGE_TEST_SLOWDOWN: a positive number, 1 when unset or invalid. */
export function slowdownFactor(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.PHASEBRIDGE_TEST_SLOWDOWN;
  if (raw === undefined || raw.trim() === '') return 1;
  const n = Number(raw);
  if (!Number.isFinite(n) || n <= 0) {
    throw new Error(
      `PHASEBRIDGE_TEST_SLOWDOWN must be a positive number, got ${JSON.stringify(raw)}`,
    );
  }
  // A factor below 1 would only make a quiet machine flaky: deadlines are never shortened.
  return Math.max(1, n);
}

/** `ms` scaled by the slowdown factor: use it for every test timeout and every wait's deadline. */
export function slow(ms: number): number {
  return Math.ceil(ms * slowdownFactor());
}

/** Polls `check` every `everyMs` until it is truthy; fails with `message` after `slow(timeoutMs)`. */
export async function waitUntil<T>(
  check: () => T | Promise<T>,
  opts: { timeoutMs?: number; everyMs?: number; message?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + slow(opts.timeoutMs ?? 10_000);
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      throw new Error(
        opts.message ?? `condition not met within ${slow(opts.timeoutMs ?? 10_000)} ms`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 20));
  }
}

/**
 * For "nothing more happens" checks: polls `check` for `slow(ms)` and fails as soon as it is false
 * (an absence has no event to wait for; the window grows with the factor, it never shrinks).
 */
export async function holdsFor(
  check: () => boolean | Promise<boolean>,
  ms: number,
  message = 'the condition stopped holding',
): Promise<void> {
  const until = Date.now() + slow(ms);
  for (;;) {
    if (!(await check())) throw new Error(message);
    if (Date.now() > until) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}
