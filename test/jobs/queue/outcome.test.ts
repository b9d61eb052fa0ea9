import { describe, expect, it } from 'vitest';
import { resultColumnsOf, runToOutcome } from '../../../src/jobs/queue/outcome.ts';
import { CANCEL_REASON, type QueuedJob } from '../../../src/jobs/queue/port.ts';

const job: QueuedJob = { id: 'r:s:1', runId: 'r', stepId: 's', attempt: 1, payload: {} };

describe('runToOutcome', () => {
  it('reports a cancel even when the processor still returned a result', async () => {
    const controller = new AbortController();
    const outcome = await runToOutcome(
      async () => {
        controller.abort(CANCEL_REASON);
        return { exitCode: 0 };
      },
      job,
      controller.signal,
    );
    expect(outcome).toEqual({ ok: false, error: 'cancelled', cancelled: true });
  });

  it('fails a job whose result cannot be stored as JSON', async () => {
    const signal = new AbortController().signal;
    const big = await runToOutcome(async () => ({ n: 1n }), job, signal);
    expect(big).toMatchObject({ ok: false, error: expect.stringContaining('not JSON') });
    const none = await runToOutcome(
      async () => null as unknown as Record<string, unknown>,
      job,
      signal,
    );
    expect(none).toEqual({ ok: false, error: 'processor returned no JSON object' });
  });
});

describe('resultColumnsOf', () => {
  it("reads the agent runner's exit code and usage, and ignores what is not a number", () => {
    expect(
      resultColumnsOf({
        exitCode: 2,
        telemetry: { tokensIn: 1200, tokensOut: 340, costUsd: 0.0123 },
      }),
    ).toEqual({ exitCode: 2, tokensIn: 1200, tokensOut: 340, costUsd: 0.0123 });
    expect(resultColumnsOf({ exitCode: '0', telemetry: { tokensIn: 1.5 } })).toEqual({
      exitCode: null,
      tokensIn: null,
      tokensOut: null,
      costUsd: null,
    });
    expect(resultColumnsOf(undefined).exitCode).toBeNull();
  });
});
