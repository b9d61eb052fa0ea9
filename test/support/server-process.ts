/**
 * What the harnesses of real servers the tests start (redis.ts, postgres.ts) share: a free port,
 * a signal to a pid that may be gone, and a wait for a condition with a deadline that scales
 * with PHASEBRIDGE_TEST_SLOWDOWN.
 */
import { createServer } from 'node:net';
import { slow } from './slowdown.ts';

/** Sends `signal` to `pid`; a process already gone is not an error. */
export function kill(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // already gone
  }
}

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` until it holds; throws `message` once `timeoutMs` (scaled) has passed. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  message: string,
): Promise<void> {
  const deadline = Date.now() + slow(timeoutMs);
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(message);
}
