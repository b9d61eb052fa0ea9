import { describe, expect, it } from 'vitest';
import {
  decodeFailure,
  encodeFailure,
  STALLED_LIMIT_REASON,
  specFromId,
  stateOf,
} from '../../../src/jobs/queue/bullmq-codec.ts';

describe('bullmq failure encoding', () => {
  it('round-trips a cancel and a plain failure through failedReason', () => {
    const cancelled = { ok: false as const, error: 'cancelled', cancelled: true };
    expect(decodeFailure(encodeFailure(cancelled))).toEqual(cancelled);
    expect(decodeFailure(encodeFailure({ ok: false, error: 'exit 1' }))).toEqual({
      ok: false,
      error: 'exit 1',
    });
  });

  it("reads BullMQ's stalled-limit failure as a lost job", () => {
    expect(decodeFailure(STALLED_LIMIT_REASON)).toMatchObject({ ok: false, lost: true });
  });

  it('maps BullMQ states to the five port states', () => {
    expect(stateOf('delayed', undefined)).toBe('waiting');
    expect(stateOf('prioritized', undefined)).toBe('waiting');
    expect(stateOf('active', undefined)).toBe('active');
    expect(
      stateOf('failed', decodeFailure(encodeFailure({ ok: false, error: 'x', cancelled: true }))),
    ).toBe('cancelled');
    expect(stateOf('failed', { ok: false, error: 'x' })).toBe('failed');
  });

  it('rebuilds a spec from an id when the job data is gone', () => {
    expect(specFromId('r:s:3')).toEqual({ runId: 'r', stepId: 's', attempt: 3, payload: {} });
  });
});
