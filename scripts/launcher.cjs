/**
 * Template of dist/launcher.cjs (scripts/bundle.mjs writes it with BUNDLE set to the bundle's
 * name; bin/phasebridge.js requires it, dist/main.js runs it for `npm start` and the image):
 * runs the CommonJS bundle dist/main-<hash>.cjs, and the library bundles dist/vendor/*.cjs it
 * requires, with a V8 code cache, the way v8-compile-cache does. Node 20 caches no compiled ESM,
 * and compiling the code was the largest part of a CLI command's start; with a cache V8 reads the
 * compiled functions instead of parsing the source.
 *
 * One cache per bundle file and command (`status`, `serve`, ...; `help` for `--help`/`--version`),
 * since a cache holds the functions that ran:
 * dist/cache/<file, / as _>.<command>.<V8 version>[-<flags hash>].v8, written (to a temp file,
 * then renamed) when the process exits if it was missing or V8 rejected it. The content hash in
 * a bundle's name ties its caches to one build (V8 itself only checks the source's length); the
 * build removes the caches of old bundles. A cache that cannot be read or written (read-only
 * dist/) only costs the compile it would have saved.
 *
 * CommonJS (.cjs): an ES module here would start Node's ES module loader, ~20 more of Node's
 * own modules and a resolve per import, on every command.
 */
'use strict';
const { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { createRequire, Module } = require('node:module');
const path = require('node:path');
const vm = require('node:vm');

const BUNDLE = 'main.cjs';

const dir = __dirname;

/** `status`, `serve`, ...; `help` for `--help`, `--version` or no command. */
function commandKey(argv) {
  const command = argv.slice(2).find((a) => !a.startsWith('-')) ?? 'help';
  return /^[a-z][a-z0-9-]{0,31}$/.test(command) ? command : 'other';
}

/** <V8 version>[-<hash of the flags>]: V8 rejects a cache made under other flags. */
function variantOf(execArgv, nodeOptions) {
  const flags = `${execArgv.join(' ')} ${nodeOptions ?? ''}`.trim();
  let hash = 0;
  for (let i = 0; i < flags.length; i++) hash = (Math.imul(hash, 31) + flags.charCodeAt(i)) | 0;
  return `${process.versions.v8}${flags ? `-${(hash >>> 0).toString(36)}` : ''}`;
}

const cacheSuffix = `${commandKey(process.argv)}.${variantOf(process.execArgv, process.env.NODE_OPTIONS)}.v8`;

/** Writes `data` to `file` by a rename (readers never see half of it); quietly does nothing if it cannot. */
function writeQuietly(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(tmp, data);
    renameSync(tmp, file);
  } catch {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // Nothing to clean up, or not ours to.
    }
  }
}

/**
 * Runs the bundle file `file` (under dist/) as a CommonJS module and returns its exports: compiled
 * from its code cache when there is a usable one, which is written at exit otherwise (then it
 * holds every function the command ran, not only the top level).
 */
function load(file) {
  const cacheFile = path.join(dir, 'cache', `${file.replaceAll('/', '_')}.${cacheSuffix}`);
  let cachedData;
  try {
    cachedData = readFileSync(cacheFile);
  } catch {
    // Missing: written at exit.
  }
  const filename = path.join(dir, file);
  // A bundle is a function expression, (exports, require, module, __filename, __dirname) as
  // Node's CommonJS wrapper. esbuild writes ASCII only (non-ASCII escaped; the build checks it):
  // latin1 reads it exactly, and fastest.
  const script = new vm.Script(readFileSync(filename, 'latin1'), {
    filename,
    cachedData,
    // The build turns `import()` of a library into a lazy require(); this keeps any other
    // `import()` working as in a CommonJS module (with an experimental-feature warning).
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  if (cachedData === undefined || script.cachedDataRejected) {
    process.once('exit', () => writeQuietly(cacheFile, script.createCachedData()));
  }
  const mod = new Module(filename);
  mod.filename = filename;
  mod.paths = Module._nodeModulePaths(path.dirname(filename));
  const nodeRequire = createRequire(filename);
  // The main bundle requires the library bundles (dist/vendor/) by relative path: through here.
  const require = (spec) =>
    spec.startsWith('./vendor/') ? vendor(spec.slice(2)) : nodeRequire(spec);
  Object.assign(require, nodeRequire);
  script.runInThisContext()(mod.exports, require, mod, filename, path.dirname(filename));
  mod.loaded = true;
  return mod.exports;
}

const vendorExports = new Map();

/** The exports of library bundle `file` (`vendor/<name>-<hash>.cjs`), loaded once. */
function vendor(file) {
  if (!vendorExports.has(file)) vendorExports.set(file, load(file));
  return vendorExports.get(file);
}

load(BUNDLE);
