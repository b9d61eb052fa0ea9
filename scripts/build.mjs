#!/usr/bin/env node
/**
 * Bundles the CLI (src/cli/main.ts) to dist/main.js with esbuild, for `npm start`: plain
 * JavaScript, no TypeScript compile at start-up (tsx costs ~0.5 s and ~30 MB). Code splitting
 * keeps every lazy `await import()` lazy (unconfigured adapters and the BullMQ driver are
 * never loaded). bin/phasebridge.js keeps running the sources through tsx and never reads dist/.
 *
 * Libraries are bundled in too, except KEEP_EXTERNAL: Node resolving, reading and compiling
 * the SDKs' hundreds of small CommonJS files cost more than running them (all adapters: ~1.2 s
 * of CPU to ready with libraries external, ~0.7 s bundled). `--external` bundles only our code.
 *
 * Run: node scripts/build.mjs [--if-stale] [--external]
 *   --if-stale  do nothing when dist/main.js is newer than every source and the lockfile
 */
import { readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const outdir = path.join(root, 'dist');
const entry = path.join(outdir, 'main.js');
const args = new Set(process.argv.slice(2));

/**
 * Loaded from node_modules as usual: native addons (better-sqlite3 and the SDKs' optional
 * ones), pino (its transports load files by path) and the lazily used BullMQ driver's stack.
 */
const KEEP_EXTERNAL = new Set([
  'better-sqlite3',
  'bullmq',
  'ioredis',
  'pino',
  'pino-pretty',
  'bufferutil',
  'utf-8-validate',
  'zlib-sync',
  'erlpack',
]);

/** Newest modification time (ms) of the files under `dir`, recursively. */
function newestMtime(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile())
      newest = Math.max(newest, statSync(path.join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return newest;
}

function isStale() {
  let built;
  try {
    built = statSync(entry).mtimeMs;
  } catch {
    return true;
  }
  const inputs = ['src', 'migrations'].map((d) => newestMtime(path.join(root, d)));
  for (const f of ['package.json', 'package-lock.json', 'scripts/build.mjs']) {
    inputs.push(statSync(path.join(root, f), { throwIfNoEntry: false })?.mtimeMs ?? 0);
  }
  return Math.max(...inputs) > built;
}

/** `react` → `react`, `@slack/bolt/dist/x` → `@slack/bolt`. */
const packageOf = (spec) => spec.split('/', spec.startsWith('@') ? 2 : 1).join('/');

/** Bundles every bare import except KEEP_EXTERNAL (and, with --external, every one). */
const externals = {
  name: 'phasebridge-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, ({ path: spec }) => {
      const external =
        spec.startsWith('node:') || args.has('--external') || KEEP_EXTERNAL.has(packageOf(spec));
      return external ? { path: spec, external: true } : undefined;
    });
  },
};

if (args.has('--if-stale') && !isStale()) process.exit(0);

const started = performance.now();
// A clean folder: chunk names carry content hashes, so old ones would pile up.
rmSync(outdir, { recursive: true, force: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'src/cli/main.ts' },
  outdir,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  plugins: [externals],
  // Bundled CommonJS libraries call require() (for Node built-ins); ESM has none of its own.
  banner: {
    js: "import { createRequire as __pbCreateRequire } from 'node:module'; const require = __pbCreateRequire(import.meta.url);",
  },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
  sourcemap: true,
  metafile: true,
  logLevel: 'warning',
});

const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.js'));
const kb = outputs.reduce((sum, [, out]) => sum + out.bytes, 0) / 1024;
const ms = performance.now() - started;
console.error(
  `phasebridge: built dist/main.js (${outputs.length} files, ${kb.toFixed(0)} kB) in ${ms.toFixed(0)} ms`,
);
