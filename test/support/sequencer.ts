/**
 * The order files start in: longest first, both tiers in one queue. Vitest's own order runs the
 * fast tier first and then the slow one by last duration, or, with no timing cache (a fresh
 * clone, CI), by file size: a 10-line file that runs the whole Telegram contract (60 s) then
 * started last and ran alone at the end. Here a file weighs its last duration when the cache has
 * one, else its estimate from `LONG_FILES` (test/support/tiers.ts), else a slow-tier or
 * fast-tier default; the short fast files fill the forks at the end.
 *
 * With a seed (`--sequence.shuffle`, or `--sequence.shuffle.files --sequence.seed=N`) the files
 * are shuffled instead: a custom sequencer replaces vitest's random one, so without this the
 * file order stayed longest-first and a "shuffled" run proved nothing about files that share a
 * fork (test/support/shared-fork.ts).
 */
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { LONG_FILES } from './tiers.ts';

/** Estimates (ms) for a file the timing cache does not know. */
const SLOW_DEFAULT_MS = 4000;
const FAST_DEFAULT_MS = 500;

/** Longest first across both projects (vitest.config.ts `sequence.sequencer`). */
export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seed = this.ctx.config.sequence.seed;
    if (seed !== undefined) return shuffled(files, seed);
    const root = this.ctx.config.root;
    const weight = new Map<TestSpecification, number>();
    for (const f of files) {
      const file = path.relative(root, f.moduleId).split(path.sep).join('/');
      const cached = this.ctx.cache.getFileTestResults(`${f.project.name}:${file}`)?.duration;
      const estimate =
        (LONG_FILES[file] ?? 0) * 1000 ||
        (f.project.name === 'slow' ? SLOW_DEFAULT_MS : FAST_DEFAULT_MS);
      weight.set(f, cached ?? estimate);
    }
    return [...files].sort((a, b) => weight.get(b)! - weight.get(a)!);
  }
}

/** `items` in an order fixed by `seed` (Fisher-Yates on a mulberry32 stream): a run can be replayed. */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}
