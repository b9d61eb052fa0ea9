#!/usr/bin/env node
/**
 * Builds dist/main.js, the bundle bin/phasebridge.js and `npm start` run (see scripts/bundle.mjs):
 * plain JavaScript, no TypeScript compile at start-up (tsx costs ~0.5 s and ~30 MB).
 * `npm install`/`npm ci` run it through the `prepare` script, which skips it when there are no
 * sources to build (the Dockerfile installs from package.json alone, then copies the rest).
 *
 * Run: node scripts/build.mjs [--if-stale] [--external]
 *   --if-stale  do nothing when dist/main.js is newer than every source and the lockfile
 *   --external  bundle only our code (libraries load from node_modules)
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundle } from './bundle.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = new Set(process.argv.slice(2));

const built = await ensureBundle(root, {
  force: !args.has('--if-stale'),
  external: args.has('--external'),
});
if (built) {
  const { files, kB, ms } = built;
  console.error(`phasebridge: built dist/main.js (${files} files, ${kB} kB) in ${ms} ms`);
}
