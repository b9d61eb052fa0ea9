import { describe, expect, it } from 'vitest';
import {
  DEFAULT_RETRY_POLICY,
  SerialQueues,
  withRateLimitRetry,
} from '../../src/bridges/delivery.ts';
import { type PhasebridgeError, PlatformError, RateLimitedError } from '../../src/errors.ts';

/** What a platform SDK might throw: a raw error the adapter's `toError` translates. */
class SdkError extends Error {
  constructor(
    readonly status: number,
    readonly retryAfterSeconds = 0,
  ) {
    super(`HTTP ${status}`);
  }
}

const toError = (thrown: unknown): PhasebridgeError =>
  thrown instanceof SdkError && thrown.status === 429
    ? new RateLimitedError('test', thrown.retryAfterSeconds * 1000)
    : new PlatformError('test', thrown instanceof Error ? thrown.message : String(thrown));

/** A wait that records how long it was asked to wait instead of sleeping. */
function recordingWait() {
  const waits: number[] = [];
  return { waits, wait: async (ms: number) => void waits.push(ms) };
}

describe('withRateLimitRetry', () => {
  it('waits each Retry-After and retries until the call succeeds', async () => {
    const { waits, wait } = recordingWait();
    let calls = 0;
    const result = await withRateLimitRetry(
      async () => {
        calls += 1;
        if (calls === 1) throw new SdkError(429, 3);
        if (calls === 2) throw new SdkError(429, 1);
        return 'sent';
      },
      { toError, policy: { maxRetries: 5, maxWaitMs: 10_000 }, wait },
    );
    expect(result).toBe('sent');
    expect(waits).toEqual([3000, 1000]);
    expect(calls).toBe(3);
  });

  it('gives the RateLimitedError to the caller after maxRetries waits', async () => {
    const { waits, wait } = recordingWait();
    let calls = 0;
    const err = await withRateLimitRetry(
      async () => {
        calls += 1;
        throw new SdkError(429, 1);
      },
      { toError, policy: { maxRetries: 2, maxWaitMs: 5000 }, wait },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(1000);
    expect(calls).toBe(3);
    expect(waits).toEqual([1000, 1000]);
  });

  it('does not wait for a limit longer than maxWaitMs', async () => {
    const { waits, wait } = recordingWait();
    let calls = 0;
    const err = await withRateLimitRetry(
      async () => {
        calls += 1;
        throw new SdkError(429, 120);
      },
      { toError, policy: { maxRetries: 8, maxWaitMs: 60_000 }, wait },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('never retries other errors and throws them as toError translated them', async () => {
    const { waits, wait } = recordingWait();
    let calls = 0;
    const err = await withRateLimitRetry(
      async () => {
        calls += 1;
        throw new SdkError(403);
      },
      { toError, wait },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as PlatformError).message).toBe('test: HTTP 403');
    expect(calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('uses the default policy when none is given: up to 8 waits of at most a minute', async () => {
    expect(DEFAULT_RETRY_POLICY).toEqual({ maxRetries: 8, maxWaitMs: 60_000 });
    const { waits, wait } = recordingWait();
    const err = await withRateLimitRetry(
      async () => {
        throw new SdkError(429, 60);
      },
      { toError, wait },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect(waits).toEqual(Array(8).fill(60_000));
  });
});

describe('SerialQueues', () => {
  it('runs tasks of one key in order, even after a failure, and other keys alongside', async () => {
    const queues = new SerialQueues();
    const log: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const first = queues.run('a', async () => {
      await gate;
      log.push('a1');
      throw new Error('a1 failed');
    });
    const second = queues.run('a', async () => {
      log.push('a2');
      return 'a2 done';
    });
    // Key b is not held up by key a's task waiting at the gate.
    await queues.run('b', async () => log.push('b1'));
    expect(log).toEqual(['b1']);
    release();
    await expect(first).rejects.toThrow('a1 failed');
    await expect(second).resolves.toBe('a2 done');
    expect(log).toEqual(['b1', 'a1', 'a2']);
  });

  it('forgets a key once its tasks settled', async () => {
    const queues = new SerialQueues();
    await Promise.all([
      queues.run('a', async () => 1),
      queues.run('b', async () => 2),
      queues.run('a', async () => 3),
    ]);
    // The bookkeeping runs one microtask after the last task settles.
    await new Promise((resolve) => setImmediate(resolve));
    expect(queues.busyKeys).toBe(0);
  });
});
