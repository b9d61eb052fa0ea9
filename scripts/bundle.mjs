/**
 * Builds the CLI bundle (src/cli/main.ts → dist/main.js) with esbuild, and tells whether it is
 * stale. Imported by bin/phasebridge.js on every call, so importing it is cheap: fs and path only,
 * esbuild is loaded when a build actually runs. scripts/build.mjs is the command-line wrapper.
 *
 * Libraries are bundled in too, except KEEP_EXTERNAL: Node resolving, reading and compiling
 * the SDKs' hundreds of small CommonJS files cost more than running them (all adapters: ~1.2 s
 * of CPU to ready with libraries external, ~0.7 s bundled). Code splitting keeps every lazy
 * `await import()` lazy (unconfigured adapters and the BullMQ driver are never loaded).
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

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

/** Folders and files whose change makes the bundle stale (relative to the package root). */
const INPUT_DIRS = ['src', 'migrations'];
const INPUT_FILES = ['package.json', 'package-lock.json', 'scripts/bundle.mjs'];

/** A lock older than this is left over by a build that died; it is taken over. */
const LOCK_STALE_MS = 120_000;

/** `dist/` and `dist/main.js` of the package at `root`. */
export function distPaths(root) {
  const outdir = path.join(root, 'dist');
  return { outdir, entry: path.join(outdir, 'main.js') };
}

/**
 * Newest mtime (ms) of `dir` and everything under it; folders count, so a deletion shows. A plain
 * walk: readdirSync's `recursive` option costs ~3× as much (~8 ms vs ~2.5 ms for src/, cold).
 */
function newestMtime(dir) {
  const st = statSync(dir, { throwIfNoEntry: false });
  if (st === undefined) return 0;
  let newest = st.mtimeMs;
  if (st.isDirectory()) {
    for (const name of readdirSync(dir)) newest = Math.max(newest, newestMtime(`${dir}/${name}`));
  }
  return newest;
}

/**
 * Why dist/main.js must be rebuilt ('dist/main.js missing', 'sources changed'), or null when it
 * is newer than every source, migration, package.json, the lockfile and this build script.
 */
export function staleReason(root) {
  const built = statSync(distPaths(root).entry, { throwIfNoEntry: false })?.mtimeMs;
  if (built === undefined) return 'dist/main.js missing';
  for (const dir of INPUT_DIRS) {
    if (newestMtime(path.join(root, dir)) > built) return 'sources changed';
  }
  for (const file of INPUT_FILES) {
    const mtime = statSync(path.join(root, file), { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (mtime > built) return 'sources changed';
  }
  return null;
}

/** `react` → `react`, `@slack/bolt/dist/x` → `@slack/bolt`. */
const packageOf = (spec) => spec.split('/', spec.startsWith('@') ? 2 : 1).join('/');

/** Bundles every bare import except KEEP_EXTERNAL (every one with `external`). */
const externalsPlugin = (externalAll) => ({
  name: 'phasebridge-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, ({ path: spec }) => {
      const external =
        spec.startsWith('node:') || externalAll || KEEP_EXTERNAL.has(packageOf(spec));
      return external ? { path: spec, external: true } : undefined;
    });
  },
});

/** Every file under `dir` (relative paths), skipping dot-entries such as the build lock. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
}

/**
 * Builds dist/ and returns { files, kB, ms }. Each file is replaced by a rename and main.js goes
 * last, so a process starting meanwhile sees the old bundle or the new one, never half of each.
 * Files of the previous build stay until the next one (a running process may still import its
 * lazy chunks); older ones are removed. `external`: bundle only our own code.
 */
export async function buildBundle(root, { external = false } = {}) {
  const { build } = await import('esbuild');
  const { outdir, entry } = distPaths(root);
  const started = Date.now();
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    plugins: [externalsPlugin(external)],
    // Bundled CommonJS libraries call require() (for Node built-ins); ESM has none of its own.
    banner: {
      js: "import { createRequire as __pbCreateRequire } from 'node:module'; const require = __pbCreateRequire(import.meta.url);",
    },
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: true,
    // Less source to parse at every CLI start; identifiers kept so stack traces stay readable.
    minifyWhitespace: true,
    minifySyntax: true,
    // dist/meta.json: which library ends up in which chunk (bench/cli-start.ts reports it).
    metafile: true,
    write: false,
    logLevel: 'warning',
  });
  const previousBuild = statSync(entry, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const written = new Set();
  const meta = { path: path.join(outdir, 'meta.json'), contents: JSON.stringify(result.metafile) };
  const outputs = [
    ...result.outputFiles.filter((f) => f.path !== entry),
    meta,
    ...result.outputFiles.filter((f) => f.path === entry),
  ];
  for (const file of outputs) {
    mkdirSync(path.dirname(file.path), { recursive: true });
    const tmp = `${file.path}.${process.pid}.tmp`;
    writeFileSync(tmp, file.contents);
    renameSync(tmp, file.path);
    written.add(path.relative(outdir, file.path));
  }
  // Dated from the build's start: a source saved while esbuild ran still counts as newer.
  utimesSync(entry, started / 1000, started / 1000);
  for (const rel of filesUnder(outdir)) {
    const file = path.join(outdir, rel);
    if (!written.has(rel) && statSync(file).mtimeMs < previousBuild - 60_000) unlinkSync(file);
  }
  const js = result.outputFiles.filter((f) => f.path.endsWith('.js'));
  const kB = js.reduce((sum, f) => sum + f.contents.byteLength, 0) / 1024;
  return { files: js.length, kB: Math.round(kB), ms: Date.now() - started };
}

/** Whether the build lock's holder is gone: its pid no longer runs, or the lock is too old. */
function lockAbandoned(file) {
  let pid;
  let since;
  try {
    pid = Number(readFileSync(file, 'utf8'));
    since = statSync(file).mtimeMs;
  } catch {
    return false; // released meanwhile: the next attempt takes it
  }
  if (Date.now() - since > LOCK_STALE_MS) return true;
  if (!pid) return false; // its holder is writing its pid
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return err.code === 'ESRCH';
  }
}

/** Takes dist/.build-lock (a file holding our pid), waiting while a live process holds it. */
async function takeLock(file) {
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => rmSync(file, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    // A build stopped by Ctrl-C leaves its lock behind: the next call takes it over.
    if (lockAbandoned(file)) rmSync(file, { force: true });
    else await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Rebuilds dist/ when stale (always with `force`) and returns buildBundle's figures, or null when
 * it was fresh: then a handful of stat calls. Concurrent callers (parallel CLI calls, test
 * workers) build once: the first takes a lock, the others wait for it and then find the bundle
 * fresh. `onBuild(reason)` runs before a build starts.
 */
export async function ensureBundle(
  root,
  { force = false, external = false, onBuild = () => {} } = {},
) {
  if (!force && staleReason(root) === null) return null;
  const { outdir } = distPaths(root);
  mkdirSync(outdir, { recursive: true });
  const release = await takeLock(path.join(outdir, '.build-lock'));
  try {
    const reason = force ? 'requested' : staleReason(root);
    if (reason === null) return null;
    onBuild(reason);
    return await buildBundle(root, { external });
  } finally {
    release();
  }
}
