/**
 * `npm run bench`: runs every benchmark in its own process, one after another (so they do not
 * compete for the two cores), and prints one JSON object keyed by benchmark name.
 * `npm run bench -- engine-commit` runs only the named ones.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'engine-commit',
  'queue-latency',
  'startup',
  'feed-latency',
  'cli-start',
  'long-run',
  'fanout',
  'history',
  'sessions',
  'tasks',
  'workers',
  'console-runs',
  'console-upload',
  'tool-approval',
] as const;
const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const selected = wanted.length > 0 ? BENCHES.filter((b) => wanted.includes(b)) : [...BENCHES];

const results: Record<string, unknown> = {};
for (const name of selected) {
  process.stderr.write(`bench: ${name}…\n`);
  const res = spawnSync(process.execPath, ['--import', 'tsx', join(here, `${name}.ts`)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const out = res.stdout.trim();
  try {
    // Each benchmark prints one JSON object (possibly pretty-printed) on stdout.
    results[name] = JSON.parse(out.slice(out.indexOf('{')));
  } catch {
    results[name] = { error: `exit ${res.status}`, output: out.slice(-2000) };
  }
}
console.log(JSON.stringify(results, null, 2));
