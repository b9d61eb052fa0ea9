/**
 * Builds the CLI bundle (src/cli/main.ts → dist/) with esbuild; whether it is stale is
 * scripts/stale.cjs (what bin/phasebridge.js checks on every call; it imports this file only to
 * build). esbuild is loaded when a build actually runs. scripts/build.mjs is the command-line
 * wrapper.
 *
 * Libraries are bundled in too, except KEEP_EXTERNAL (scripts/bundle-config.mjs, with the rest of
 * what goes into which bundle; the build lock is scripts/build-lock.mjs): Node resolving, reading and compiling
 * the SDKs' hundreds of small CommonJS files cost more than running them (all adapters: ~1.2 s
 * of CPU to ready with libraries external, ~0.7 s bundled).
 *
 * Layout: dist/main-<hash>.cjs is ONE CommonJS bundle of our code and its libraries (a lazy
 * `await import()` becomes a lazy module init: its code is compiled only when called); big
 * libraries only some commands use (VENDOR) are each a CommonJS bundle of their own,
 * dist/vendor/<name>-<hash>.cjs, loaded on first use only. dist/launcher.cjs (from
 * scripts/launcher.cjs; the bin requires it, dist/main.js runs it) runs them through a V8 code
 * cache kept in dist/cache/: Node 20 has no compile cache for ES modules, and compiling them
 * was the largest part of a CLI command's start. dist/fast-status.cjs and dist/help.txt answer a
 * plain `status`/`runs` and `--help` without the main bundle (scripts/fast-paths.mjs).
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';
import { takeLock } from './build-lock.mjs';
import {
  COMMON,
  externalsPlugin,
  VENDOR,
  VENDOR_GROUPS,
  vendorEntryPlugin,
  vendorName,
  WRAPPER,
} from './bundle-config.mjs';
import { fastStatusOptions, writeHelpText } from './fast-paths.mjs';
import stale from './stale.cjs';

/** The paths under `dist/` of the package at `root` (see scripts/stale.cjs). */
export const distPaths = stale.distPaths;
/** Why dist/ must be rebuilt, or null (see scripts/stale.cjs). */
export const staleReason = stale.staleReason;

/** Every file under `dir` (relative paths), skipping dot-entries such as the build lock. */
function filesUnder(dir) {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && !e.name.startsWith('.'))
    .map((e) => path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
}

/**
 * Builds dist/ and returns { files, kB, ms }. Each file is replaced by a rename and main.js goes
 * last, so a process starting meanwhile sees the old bundle or the new one, never half of each.
 * Files of the previous build stay until the next one (a running process may still require its
 * SDK bundles); older ones are removed, and so are code caches of older bundles.
 * `external`: bundle only our own code.
 */
export async function buildBundle(root, { external = false } = {}) {
  const { build } = await import('esbuild');
  const { outdir, entry, fastStatus, help } = distPaths(root);
  const started = Date.now();
  // The SDKs first: the main bundle names their files, whose hashes follow their contents.
  const vendored = external ? [] : VENDOR;
  const vendorResults = await Promise.all(
    vendored.map((spec) =>
      build({
        ...COMMON,
        ...WRAPPER,
        absWorkingDir: root,
        entryPoints: { [vendorName(spec)]: `pb-vendor:${spec}` },
        outdir: path.join(outdir, 'vendor'),
        plugins: [vendorEntryPlugin(root), externalsPlugin(false)],
      }),
    ),
  );
  const vendorFiles = new Map();
  const relative = (result) => {
    const file = result.outputFiles.find((f) => f.path.endsWith('.cjs')).path;
    return `./${path.relative(outdir, file).split(path.sep).join('/')}`;
  };
  for (const [i, spec] of vendored.entries()) vendorFiles.set(spec, relative(vendorResults[i]));
  // The groups next: they name the single-library bundles (zod) as the main bundle does.
  const groupNames = external ? [] : Object.keys(VENDOR_GROUPS);
  const groupResults = await Promise.all(
    groupNames.map((name) =>
      build({
        ...COMMON,
        ...WRAPPER,
        absWorkingDir: root,
        entryPoints: { [name]: `pb-vendor-group:${name}` },
        outdir: path.join(outdir, 'vendor'),
        plugins: [vendorEntryPlugin(root), externalsPlugin(false, vendorFiles)],
      }),
    ),
  );
  vendorResults.push(...groupResults);
  const groupFiles = new Map();
  groupNames.forEach((name, i) => {
    for (const spec of VENDOR_GROUPS[name]) groupFiles.set(spec, relative(groupResults[i]));
  });
  // The bin's answers without the main bundle (scripts/fast-paths.mjs), built alongside it.
  const fastBuild = build(fastStatusOptions(root, outdir, COMMON, externalsPlugin(external)));
  const mainBuild = build({
    ...COMMON,
    absWorkingDir: root,
    ...WRAPPER,
    entryPoints: { main: 'src/cli/main.ts' },
    outdir,
    plugins: [externalsPlugin(external, vendorFiles, true, groupFiles)],
    // dist/meta.json: which library ends up in the bundle (bench/cli-start.ts reports it).
    metafile: true,
  });
  const [result, fast] = await Promise.all([mainBuild, fastBuild]);
  if (!fast.outputFiles.some((f) => f.path === fastStatus)) {
    throw new Error(`the fast status bundle is not ${fastStatus}, where the bin requires it`);
  }
  const bundles = [...vendorResults, result].flatMap((r) =>
    r.outputFiles.filter((f) => f.path.endsWith('.cjs')),
  );
  // The launcher reads bundles as latin1 (fastest): right only while esbuild escapes non-ASCII.
  for (const file of bundles) {
    if (file.contents.some((byte) => byte > 0x7f)) {
      throw new Error(`${file.path}: non-ASCII bytes; the launcher reads it as latin1`);
    }
  }
  const bundle = result.outputFiles.find((f) => f.path.endsWith('.cjs')).path;
  const template = readFileSync(path.join(root, 'scripts', 'launcher.cjs'), 'utf8');
  const bundleName = path.basename(bundle);
  const launcher = template.replace(
    "const BUNDLE = 'main.cjs';",
    `const BUNDLE = ${JSON.stringify(bundleName)};`,
  );
  if (launcher === template) throw new Error('scripts/launcher.cjs: no BUNDLE line to set');

  const previousBuild = statSync(entry, { throwIfNoEntry: false })?.mtimeMs ?? 0;
  const written = new Set();
  const outputs = [
    ...vendorResults.flatMap((r) => r.outputFiles),
    ...result.outputFiles,
    { path: path.join(outdir, 'meta.json'), contents: JSON.stringify(result.metafile) },
    ...fast.outputFiles,
    { path: path.join(outdir, 'fast-status.meta.json'), contents: JSON.stringify(fast.metafile) },
    // The bin requires launcher.cjs itself (CommonJS: no ES module loader at start-up); main.js,
    // for `npm start` and the image, names the same bundle and requires it too.
    { path: path.join(outdir, 'launcher.cjs'), contents: launcher },
  ];
  const writeOut = (file, contents) => {
    mkdirSync(path.dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, contents);
    renameSync(tmp, file);
    written.add(path.relative(outdir, file));
  };
  for (const file of outputs) writeOut(file.path, file.contents);
  // Run by the bundle just written; main.js last, so a fresh dist/ always has its own help text.
  writeHelpText(path.join(outdir, 'launcher.cjs'), help, writeOut);
  const main = { path: entry, contents: mainModule(bundleName) };
  outputs.push(main);
  writeOut(main.path, main.contents);
  // Dated from the build's start: a source saved while esbuild ran still counts as newer.
  utimesSync(entry, started / 1000, started / 1000);
  // Code caches are named after their bundle (scripts/launcher.cjs): this build's ones stay.
  const ownCaches = [...written]
    .filter((rel) => rel.endsWith('.cjs'))
    .map((rel) => path.join('cache', `${rel.split(path.sep).join('_')}.`));
  for (const rel of filesUnder(outdir)) {
    const file = path.join(outdir, rel);
    if (written.has(rel) || ownCaches.some((prefix) => rel.startsWith(prefix))) continue;
    if (statSync(file).mtimeMs < previousBuild - 60_000) unlinkSync(file);
  }
  const js = outputs.filter((f) => /\.c?js$/.test(f.path));
  const kB = js.reduce((sum, f) => sum + Buffer.byteLength(f.contents), 0) / 1024;
  return { files: js.length, kB: Math.round(kB), ms: Date.now() - started };
}

/**
 * dist/main.js: an ES module (the package's type) that runs dist/launcher.cjs, naming the bundle
 * the launcher runs. No package.json in dist/ makes it CommonJS: code finding this package's
 * root by the nearest package.json (agent-resolver.ts) would stop at dist/.
 */
function mainModule(bundleName) {
  return [
    '// Runs dist/launcher.cjs (written with it by scripts/bundle.mjs); bin/phasebridge.js requires',
    '// the launcher directly, with no ES module loader. The bundle both run:',
    `const BUNDLE = ${JSON.stringify(bundleName)};`,
    "import { createRequire } from 'node:module';",
    "createRequire(import.meta.url)('./launcher.cjs');",
    'export { BUNDLE };',
    '',
  ].join('\n');
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
