#!/usr/bin/env node
// Installs the real Claude Code and Codex CLIs into a cache folder (never as project
// dependencies: together they are ~650 MB) for the real-CLI tests. Skipped when the pinned
// versions are already there. Prints one JSON line with the time taken and the size on disk.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Versions the tests were written against; bump together with test/jobs/runner/real-cli/. */
export const AGENT_CLIS = {
  '@anthropic-ai/claude-code': '2.1.328',
  '@openai/codex': '0.171.0',
};
const cache = process.env.PHASEBRIDGE_AGENT_CLI_CACHE ?? path.join(root, '.cache', 'agents');

function installedVersion(name) {
  try {
    const pkg = path.join(cache, 'node_modules', name, 'package.json');
    return JSON.parse(fs.readFileSync(pkg, 'utf8')).version;
  } catch {
    return null;
  }
}

/** Bytes on disk under `dir`, each hard-linked file once (the Claude binary is linked twice). */
function sizeOf(dir) {
  let total = 0;
  const seen = new Set();
  const stack = [dir];
  while (stack.length > 0) {
    const d = stack.pop();
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) {
        const st = fs.statSync(p);
        if (seen.has(st.ino)) continue;
        seen.add(st.ino);
        total += st.size;
      }
    }
  }
  return total;
}

const missing = Object.entries(AGENT_CLIS).filter(([n, v]) => installedVersion(n) !== v);
const started = Date.now();
if (missing.length > 0) {
  fs.mkdirSync(cache, { recursive: true });
  // A package.json of its own keeps npm from walking up into the project's.
  const manifest = path.join(cache, 'package.json');
  if (!fs.existsSync(manifest)) {
    fs.writeFileSync(manifest, '{"name":"phasebridge-agent-clis","private":true}\n');
  }
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      cache,
      '--no-audit',
      '--no-fund',
      '--no-package-lock',
      ...missing.map(([n, v]) => `${n}@${v}`),
    ],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
}
console.log(
  JSON.stringify({
    agentClis: cache,
    installed: missing.map(([n]) => n),
    skipped: missing.length === 0,
    installMs: Date.now() - started,
    bytes: sizeOf(cache),
  }),
);
