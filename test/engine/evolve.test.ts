import { describe, expect, it } from 'vitest';
import { evolve, replay } from '../../src/engine/evolve.ts';
import { DEMO_WORKFLOW } from '../../src/engine/workflow/builtin.ts';
import { CorruptStateError } from '../../src/errors.ts';
import { BOB, Harness } from './harness.ts';

/** A demo run driven through a checkpoint, a loop and a pause. */
function busyRun(): Harness {
  const h = new Harness();
  h.start(DEMO_WORKFLOW);
  h.finish();
  h.ok({ type: 'answerCheckpoint', answer: 'approve', actor: BOB });
  h.finish();
  h.finish({ action: 'loop' });
  h.ok({ type: 'pause' });
  return h;
}

describe('evolve and replay', () => {
  it('replay of the event log equals the folded state, and survives a JSON round trip', () => {
    const h = busyRun();
    expect(replay(h.log)).toStrictEqual(h.state);
    const fromDisk = JSON.parse(JSON.stringify(h.log));
    expect(replay(fromDisk)).toStrictEqual(JSON.parse(JSON.stringify(h.state)));
    expect(JSON.parse(JSON.stringify(h.state))).toStrictEqual(h.state);
  });

  it('counts applied events in seq and stamps updatedAt', () => {
    const h = busyRun();
    expect(h.run.seq).toBe(h.log.length);
    expect(h.run.updatedAt).toBe(h.log.at(-1)!.at);
    expect(h.run.createdAt).toBe(h.log[0]!.at);
  });

  it('replay of an empty log is null', () => {
    expect(replay([])).toBeNull();
  });

  it('never mutates its input', () => {
    const h = busyRun();
    const before = structuredClone(h.log);
    let state = null;
    for (const e of h.log) {
      const snapshot = structuredClone(state);
      const next = evolve(state, e);
      expect(state).toStrictEqual(snapshot);
      expect(next).not.toBe(state);
      state = next;
    }
    expect(h.log).toStrictEqual(before);
  });

  it('refuses an event log that makes no sense', () => {
    const h = busyRun();
    expect(() => evolve(null, h.log[1]!)).toThrow(CorruptStateError);
    expect(() => evolve(h.state, h.log[0]!)).toThrow(/second runStarted/);
    const bogus = { type: 'stepStarted', stepId: 'nope', attempt: 1, at: h.log[1]!.at } as const;
    expect(() => evolve(h.state, bogus)).toThrow(/unknown step nope/);
  });
});
