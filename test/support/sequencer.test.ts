/**
 * The suite's file order (test/support/sequencer.ts): longest first, and shuffled when a run
 * asks for it with a seed, so a shuffled run really changes which file follows which in a fork.
 */
import { describe, expect, it } from 'vitest';
import type { TestSpecification, Vitest } from 'vitest/node';
import { LongestFirstSequencer } from './sequencer.ts';

const ROOT = '/repo';
const FILES = [
  'test/a.test.ts',
  'test/contracts/telegram.test.ts',
  'test/b.test.ts',
  'test/cli/chaos.test.ts',
  'test/c.test.ts',
  'test/d.test.ts',
  'test/e.test.ts',
  'test/f.test.ts',
];

/** The order the sequencer gives FILES in, for a run with this seed (none: not shuffled). */
async function order(seed?: number): Promise<string[]> {
  const ctx = {
    config: { root: ROOT, sequence: { seed } },
    cache: { getFileTestResults: () => undefined },
  } as unknown as Vitest;
  const specs = FILES.map(
    (f) =>
      ({ moduleId: `${ROOT}/${f}`, project: { name: 'slow' } }) as unknown as TestSpecification,
  );
  const sorted = await new LongestFirstSequencer(ctx).sort(specs);
  return sorted.map((s) => s.moduleId.slice(ROOT.length + 1));
}

describe('file order', () => {
  it('starts the longest files first without a seed', async () => {
    expect((await order()).slice(0, 2)).toEqual([
      'test/contracts/telegram.test.ts',
      'test/cli/chaos.test.ts',
    ]);
  });

  it('shuffles with a seed, the same way for the same seed', async () => {
    const seven = await order(7);
    expect([...seven].sort()).toEqual([...FILES].sort());
    expect(seven).toEqual(await order(7));
    const orders = new Set(
      await Promise.all([1, 2, 3, 4, 5].map(async (s) => (await order(s)).join())),
    );
    expect(orders.size).toBeGreaterThan(1);
    expect(orders.has((await order()).join())).toBe(false);
  });
});
