import { describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/errors.ts';
import { delayOf, jobIdOf, parseJobId, validateJobSpec } from '../../../src/jobs/queue/port.ts';

const spec = {
  runId: '2026-11-29T143000Z-add-login',
  stepId: 'plan',
  attempt: 2,
  payload: { a: 1 },
};

describe('job ids and specs', () => {
  it('derives and parses runId:stepId:attempt', () => {
    const id = jobIdOf(spec);
    expect(id).toBe('2026-11-29T143000Z-add-login:plan:2');
    expect(parseJobId(id)).toEqual({ runId: spec.runId, stepId: 'plan', attempt: 2 });
    expect(parseJobId('a:b')).toBeNull();
    expect(parseJobId('a:b:x')).toBeNull();
  });

  it('validates a spec and returns its payload JSON', () => {
    expect(validateJobSpec(spec)).toEqual({ id: jobIdOf(spec), payloadJson: '{"a":1}' });
  });

  it.each([
    ['a run id with a colon', { ...spec, runId: 'a:b' }],
    ['an empty step id', { ...spec, stepId: '' }],
    ['a fractional attempt', { ...spec, attempt: 1.5 }],
    ['an array payload', { ...spec, payload: [] as unknown as Record<string, unknown> }],
    ['a payload that is not JSON', { ...spec, payload: { n: 1n } }],
  ])('refuses %s with INVALID_INPUT', (_what, bad) => {
    let error: unknown;
    try {
      validateJobSpec(bad);
    } catch (err) {
      error = err;
    }
    expect(hasCode(error, 'INVALID_INPUT')).toBe(true);
  });

  it('accepts delays >= 0 and refuses the rest', () => {
    expect(delayOf()).toBe(0);
    expect(delayOf({ delayMs: 12.2 })).toBe(13);
    expect(() => delayOf({ delayMs: -1 })).toThrow(/delayMs/);
    expect(() => delayOf({ delayMs: Number.NaN })).toThrow(/delayMs/);
  });
});
