#!/usr/bin/env node
// The `phasebridge` command: runs the esbuild bundle dist/main.js, rebuilt first when a source is
// newer (a few hundred stat calls, ~2 ms, when not). PHASEBRIDGE_FROM_SOURCE=1 runs src/ through tsx.
// CommonJS (bin/package.json): no ES module loader at start-up; the build is imported only to run.
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { distPaths, staleReason } = require('../scripts/stale.cjs');

const root = path.resolve(__dirname, '..');
/** dist/launcher.cjs: what dist/main.js runs, required here with no ES module loader. */
const launcher = path.join(distPaths(root).outdir, 'launcher.cjs');

async function fromSource() {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src/cli/main.ts')).href);
}

async function buildThenRun() {
  try {
    const { ensureBundle } = await import('../scripts/bundle.mjs');
    await ensureBundle(root, {
      onBuild: (reason) => process.stderr.write(`phasebridge: building dist/ (${reason})\n`),
    });
  } catch (err) {
    process.stderr.write(`phasebridge: building dist/ failed: ${err?.message ?? err}\n`);
    process.exit(1);
  }
  require(launcher);
}

if (process.env.PHASEBRIDGE_FROM_SOURCE === '1') {
  fromSource().catch((err) => {
    throw err;
  });
} else if (staleReason(root) === null) {
  require(launcher);
} else {
  buildThenRun().catch((err) => {
    throw err;
  });
}
