#!/usr/bin/env node
// The `phasebridge` command: runs the esbuild bundle dist/main.js, rebuilt first when a source is
// newer (a few hundred stat calls, ~2 ms, when not); a plain `status`, `runs` or `--help` is
// answered without it when it can be. PHASEBRIDGE_FROM_SOURCE=1 runs src/ through tsx.
// CommonJS (bin/package.json): no ES module loader at start-up; the build is imported only to run.
'use strict';
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { distPaths, staleReason } = require('../scripts/stale.cjs');

const root = path.resolve(__dirname, '..');
const dist = distPaths(root);
/** dist/launcher.cjs: what dist/main.js runs, required here with no ES module loader. */
const launcher = path.join(dist.outdir, 'launcher.cjs');

/** What the bin may answer without the main bundle (scripts/fast-paths.mjs), else null. */
const fastAsked = process.argv.length === 3 ? process.argv[2] : null;

/**
 * Answers a plain `status`/`runs` (dist/fast-status.cjs) or `--help`/`-h` (dist/help.txt, only when
 * stdout is no terminal: commander wraps to a terminal's width) and says whether it did; when it
 * did not, it printed nothing and the main bundle answers as if nothing had been tried.
 */
function answeredFast() {
  try {
    if (fastAsked === 'status' || fastAsked === 'runs') {
      return require(dist.fastStatus).runFastStatus(process.argv) === true;
    }
    if ((fastAsked === '--help' || fastAsked === '-h') && !require('node:tty').isatty(1)) {
      const text = require('node:fs').readFileSync(dist.help, 'utf8');
      // As src/cli/main.ts: `phasebridge --help | head` closing stdout early is not an error.
      process.stdout.on('error', (err) => {
        if (err.code === 'EPIPE') process.exit(0);
        throw err;
      });
      process.stdout.write(text);
      return true;
    }
  } catch {
    // Missing or unreadable: the main bundle answers.
  }
  return false;
}

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
  if (fastAsked === null || !answeredFast()) require(launcher);
} else {
  buildThenRun().catch((err) => {
    throw err;
  });
}
