/**
 * Builds the CLI bundle (src/cli/main.ts → dist/) with esbuild; whether it is stale is
 * scripts/stale.cjs (what bin/phasebridge.js checks on every call; it imports this file only to
 * build). esbuild is loaded when a build actually runs. scripts/build.mjs is the command-line
 * wrapper.
 *
 * Libraries are bundled in too, except KEEP_EXTERNAL: Node resolving, reading and compiling
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
  rmSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fastStatusOptions, writeHelpText } from './fast-paths.mjs';
import stale from './stale.cjs';

/** The paths under `dist/` of the package at `root` (see scripts/stale.cjs). */
export const distPaths = stale.distPaths;
/** Why dist/ must be rebuilt, or null (see scripts/stale.cjs). */
export const staleReason = stale.staleReason;

/**
 * Loaded from node_modules as usual: native addons' loaders (`bindings`, which better-sqlite3
 * uses only when src/db/connection.ts cannot name its addon; the SDKs' optional addons), pino
 * (its transports load files by path) and the lazily used BullMQ driver's stack. better-sqlite3's
 * own JavaScript is bundled: its addon is loaded by path.
 */
const KEEP_EXTERNAL = new Set([
  'bindings',
  'bullmq',
  'ioredis',
  'pino',
  'pino-pretty',
  'bufferutil',
  'utf-8-validate',
  'zlib-sync',
  'erlpack',
]);

/**
 * Libraries bundled apart (see above), so that the bundle every command reads stays small
 * (~0.9 MB instead of ~6.6 MB; the code cache's fixed part follows the bundle's size): the chat
 * SDKs (`serve`/`worker` with that chat configured), classic zod and yaml (the engine: `run`,
 * `serve`, ...; config.ts uses zod/mini, in the main bundle), prom-client (`serve`), pg (only with
 * DATABASE_URL, ~120 kB). Matched by exact import specifier: a subpath import of one of them is
 * bundled into the main bundle.
 */
const VENDOR = [
  'discord.js',
  '@slack/bolt',
  'grammy',
  'yaml',
  'prom-client',
  'zod',
  'pg',
  'kysely',
];

/**
 * Libraries bundled apart as one group, for subpath imports of one SDK that share most of their
 * code: the MCP SDK's server and stdio transport (the approval server alone uses them; with ajv
 * and zod's v3 and v4 copies, ~0.5 MB the main bundle no longer holds). The group's bundle
 * exports each specifier; bare imports in it of a VENDOR library (zod) resolve to that bundle,
 * as in the main bundle, so both see one zod.
 */
const VENDOR_GROUPS = {
  'mcp-sdk': [
    '@modelcontextprotocol/sdk/server/mcp.js',
    '@modelcontextprotocol/sdk/server/stdio.js',
  ],
};

/**
 * Node built-ins that the main bundle loads on first use, not at start: commander and many of
 * our modules import them at the top, yet `--help` or `status` never spawn a process or hash
 * anything (loading child_process and crypto pulls in ~20 more of Node's own modules, net and
 * dgram among them). Each becomes a small module whose exports are getters that require the
 * real one; only built-ins whose exports are a plain object (not a function or class) qualify.
 */
const LAZY_BUILTINS = new Set(['child_process', 'crypto']);

/** The lazy stand-in of built-in `name` (see LAZY_BUILTINS), its export names read from this Node. */
function lazyBuiltinSource(name) {
  const keys = Object.keys(createRequire(import.meta.url)(`node:${name}`)).filter(
    (k) => k !== 'default' && k !== '__esModule',
  );
  const getters = keys.map(
    (k) => `${JSON.stringify(k)}:{get:()=>load()[${JSON.stringify(k)}],enumerable:true}`,
  );
  return `let real;const load=()=>real??=require(${JSON.stringify(`node:${name}`)});module.exports=Object.defineProperties({},{${getters.join(',')}});`;
}

/** A lock older than this is left over by a build that died; it is taken over. */
const LOCK_STALE_MS = 120_000;

/** `react` → `react`, `@slack/bolt/dist/x` → `@slack/bolt`. */
const packageOf = (spec) => spec.split('/', spec.startsWith('@') ? 2 : 1).join('/');

/**
 * Bundles every bare import except KEEP_EXTERNAL (every one with `external`); `vendor` maps
 * an SDK's name to the file, relative to the bundle, that replaces it. An external one imported
 * with `import()` is required instead, in a lazy module init: the launcher runs the bundle as a
 * script, where Node 20 has no `import()` without an experimental feature.
 */
const externalsPlugin = (
  externalAll,
  vendor = new Map(),
  lazyBuiltins = false,
  groups = new Map(),
) => ({
  name: 'phasebridge-externals',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, ({ path: spec, kind, namespace }) => {
      if (spec.startsWith('pb-vendor-file:')) {
        return { path: spec.slice('pb-vendor-file:'.length), external: true };
      }
      if (vendor.has(spec)) return { path: vendor.get(spec), external: true };
      if (groups.has(spec)) return { path: spec, namespace: 'pb-group' };
      const builtin = spec.replace(/^node:/, '');
      if (lazyBuiltins && namespace !== 'pb-lazy' && LAZY_BUILTINS.has(builtin)) {
        return { path: builtin, namespace: 'pb-lazy' };
      }
      const external =
        spec.startsWith('node:') || externalAll || KEEP_EXTERNAL.has(packageOf(spec));
      if (!external) return undefined;
      if (kind === 'dynamic-import' && namespace !== 'pb-require') {
        return { path: spec, namespace: 'pb-require' };
      }
      return { path: spec, external: true };
    });
    b.onLoad({ filter: /.*/, namespace: 'pb-require' }, ({ path: spec }) => ({
      contents: `module.exports = require(${JSON.stringify(spec)});`,
      loader: 'js',
    }));
    // A grouped library: its export from the group's bundle (required when first imported).
    b.onLoad({ filter: /.*/, namespace: 'pb-group' }, ({ path: spec }) => ({
      contents: `module.exports = require(${JSON.stringify(`pb-vendor-file:${groups.get(spec)}`)})[${JSON.stringify(spec)}];`,
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'pb-lazy' }, ({ path: name }) => ({
      contents: lazyBuiltinSource(name),
      loader: 'js',
    }));
  },
});

/** Start of every bundle: strict mode, and the URL `import.meta.url` is replaced with. */
const STRICT_PROLOGUE =
  "'use strict';var __pbImportMetaUrl=require('node:url').pathToFileURL(__filename).href;";

/**
 * The main bundle is one function expression, (exports, require, module, __filename, __dirname)
 * like Node's CommonJS wrapper: the launcher compiles the file as it is, with no copy of ~1.7 MB
 * of source to wrap it.
 */
const WRAPPER = {
  banner: { js: `(function (exports, require, module, __filename, __dirname) {${STRICT_PROLOGUE}` },
  footer: { js: '})' },
};

/** Options shared by the main bundle and the SDK bundles. */
const COMMON = {
  bundle: true,
  format: 'cjs',
  platform: 'node',
  target: 'node20',
  entryNames: '[name]-[hash]',
  outExtension: { '.js': '.cjs' },
  // A CommonJS file has no import.meta: libraries and our code (createRequire) get the file's URL.
  // Strict, as the ES modules are (a directive only counts ahead of any statement).
  define: { 'import.meta.url': '__pbImportMetaUrl' },
  banner: { js: STRICT_PROLOGUE },
  sourcemap: true,
  // Less source to read at every CLI start; identifiers kept so stack traces stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  // License comments go to <bundle>.LEGAL.txt: they may hold non-ASCII (see the latin1 check).
  legalComments: 'external',
  write: false,
  logLevel: 'warning',
};

/** The name of an SDK's bundle: `@slack/bolt` → `slack-bolt`. */
const vendorName = (spec) => spec.replace(/^@/, '').replace(/[^A-Za-z0-9.]+/g, '-');

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

/** Resolves `pb-vendor:<sdk>`, an SDK bundle's entry: a module exporting the SDK. */
const vendorEntryPlugin = (root) => ({
  name: 'phasebridge-vendor-entry',
  setup(b) {
    b.onResolve({ filter: /^pb-vendor:/ }, ({ path: spec }) => ({
      path: spec.slice('pb-vendor:'.length),
      namespace: 'pb-vendor',
    }));
    b.onResolve({ filter: /^pb-vendor-group:/ }, ({ path: spec }) => ({
      path: spec.slice('pb-vendor-group:'.length),
      namespace: 'pb-vendor-group',
    }));
    b.onLoad({ filter: /.*/, namespace: 'pb-vendor-group' }, ({ path: name }) => ({
      contents: `module.exports = {${VENDOR_GROUPS[name].map((spec) => `${JSON.stringify(spec)}: require(${JSON.stringify(spec)})`).join(',')}};`,
      resolveDir: root,
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'pb-vendor' }, ({ path: spec }) => ({
      contents: `module.exports = require(${JSON.stringify(spec)});`,
      resolveDir: root,
      loader: 'js',
    }));
  },
});

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
