/**
 * Helper processes that tests start again and again (crash tests' SIGKILLed children, worker
 * processes, another process committing to a run): bundled once per test process with esbuild,
 * then started with plain `node`. Under `--import tsx` every start compiles the whole import
 * graph again: ~1 s of CPU for an orchestrator child, 4–5 s of wall time on a loaded 2-core
 * machine, which ran tests past their timeout; the bundle starts in ~0.3 s of CPU. Same
 * sources, same code paths: only the loading differs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { processAlive } from './process-alive.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * Inside the repo (and gitignored), so that the libraries, left external, resolve from
 * node_modules, and code that finds the package root from its own file (the demo agent's path)
 * finds this checkout.
 */
const PARENT = path.join(ROOT, '.cache', 'test-bundles');

const built = new Map<string, string>();
let dir: string | undefined;

/** The bundle of the TypeScript entry `entry` (built on first use in this process), to run with `node`. */
export function bundled(entry: string): string {
  const known = built.get(entry);
  if (known) return known;
  const file = path.join(ownDir(), `${built.size}-${path.basename(entry, '.ts')}.mjs`);
  buildSync({
    entryPoints: [entry],
    outfile: file,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'warning',
  });
  built.set(entry, file);
  return file;
}

/** This process's folder, removed when it exits; folders of processes gone are swept first. */
function ownDir(): string {
  if (dir) return dir;
  fs.mkdirSync(PARENT, { recursive: true });
  for (const name of fs.readdirSync(PARENT)) {
    const pid = Number(name.split('-')[0]);
    if (pid > 0 && pid !== process.pid && !processAlive(pid)) {
      fs.rmSync(path.join(PARENT, name), { recursive: true, force: true });
    }
  }
  dir = fs.mkdtempSync(path.join(PARENT, `${process.pid}-`));
  const own = dir;
  process.once('exit', () => fs.rmSync(own, { recursive: true, force: true }));
  return dir;
}
