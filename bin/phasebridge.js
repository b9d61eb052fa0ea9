#!/usr/bin/env node
// The `phasebridge` command: runs the esbuild bundle dist/main.js, rebuilt first when a source is
// newer (a few hundred stat calls, ~2 ms, when not). PHASEBRIDGE_FROM_SOURCE=1 runs src/ through tsx.
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { distPaths, ensureBundle } from '../scripts/bundle.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

if (process.env.PHASEBRIDGE_FROM_SOURCE === '1') {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(path.join(root, 'src/cli/main.ts')).href);
} else {
  try {
    await ensureBundle(root, {
      onBuild: (reason) => process.stderr.write(`phasebridge: building dist/ (${reason})\n`),
    });
  } catch (err) {
    process.stderr.write(`phasebridge: building dist/ failed: ${err?.message ?? err}\n`);
    process.exit(1);
  }
  await import(pathToFileURL(distPaths(root).entry).href);
}
