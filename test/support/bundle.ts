/**
 * Helper processes that a test starts many times (a crash test's SIGKILLed children): bundled
 * once with esbuild, then started with plain `node`. Under `--import tsx` every start compiles the
 * whole import graph again (~0.5 s of CPU each, several seconds on a loaded 2-core machine); the
 * bundle starts in ~0.1 s. Same sources, same code paths: only the loading differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** A bundled helper: `file` is the .mjs to run with `node`; `dispose` deletes it. */
export interface BundledHelper {
  readonly file: string;
  dispose(): void;
}

/**
 * Bundles the TypeScript entry `entry` into a fresh folder under the repo's .cache/ (inside the
 * repo so that libraries, left external, resolve from node_modules as they do for the sources).
 */
export async function bundleHelper(entry: string): Promise<BundledHelper> {
  const parent = path.join(ROOT, '.cache', 'test-bundles');
  fs.mkdirSync(parent, { recursive: true });
  const dir = fs.mkdtempSync(path.join(parent, `${path.basename(entry, '.ts')}-`));
  const file = path.join(dir, 'main.mjs');
  await build({
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  return { file, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
