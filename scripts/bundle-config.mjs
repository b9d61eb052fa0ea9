/**
 * What goes into which bundle, and how esbuild makes them (scripts/bundle.mjs builds with these):
 * the libraries kept external, those bundled apart (VENDOR, VENDOR_GROUPS), the built-ins loaded
 * on first use, the plugins that resolve all of them, and the options every bundle shares.
 */
import { createRequire } from 'node:module';

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
 * Libraries bundled apart (see scripts/bundle.mjs), so that the bundle every command reads stays
 * small (~0.9 MB instead of ~6.6 MB; the code cache's fixed part follows the bundle's size): the
 * chat SDKs (`serve`/`worker` with that chat configured), classic zod and yaml (the engine: `run`,
 * `serve`, ...; config.ts uses zod/mini, in the main bundle), prom-client (`serve`), pg (only with
 * DATABASE_URL, ~120 kB). Matched by exact import specifier: a subpath import of one of them is
 * bundled into the main bundle.
 */
export const VENDOR = [
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
export const VENDOR_GROUPS = {
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

/** `react` → `react`, `@slack/bolt/dist/x` → `@slack/bolt`. */
const packageOf = (spec) => spec.split('/', spec.startsWith('@') ? 2 : 1).join('/');

/**
 * Bundles every bare import except KEEP_EXTERNAL (every one with `external`); `vendor` maps
 * an SDK's name to the file, relative to the bundle, that replaces it. An external one imported
 * with `import()` is required instead, in a lazy module init: the launcher runs the bundle as a
 * script, where Node 20 has no `import()` without an experimental feature.
 */
export const externalsPlugin = (
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
export const WRAPPER = {
  banner: { js: `(function (exports, require, module, __filename, __dirname) {${STRICT_PROLOGUE}` },
  footer: { js: '})' },
};

/** Options shared by the main bundle and the SDK bundles. */
export const COMMON = {
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
export const vendorName = (spec) => spec.replace(/^@/, '').replace(/[^A-Za-z0-9.]+/g, '-');

/** Resolves `pb-vendor:<sdk>`, an SDK bundle's entry: a module exporting the SDK. */
export const vendorEntryPlugin = (root) => ({
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
