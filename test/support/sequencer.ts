/**
 * The order files start in: longest first, both tiers in one queue. Vitest's own order runs the
 * fast tier first and then the slow one by last duration, or, with no timing cache (a fresh
 * clone, CI), by file size: a 10-line file that runs the whole Telegram contract (60 s) then
 * started last and ran alone at the end. Here a file weighs its last duration when the cache has
 * one, else its estimate from `LONG_FILES` (test/support/tiers.ts), else a slow-tier or
 * fast-tier default; the short fast files fill the forks at the end.
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
