/**
 * `npm run bench`: runs every benchmark in its own process, one after another (so they do not
 * compete for the two cores), and prints one JSON object keyed by benchmark name.
 * `npm run bench -- engine-commit` runs only the named ones.
 *
 * It also keeps the figures (bench/figures.ts): bench/results.json holds each one's last value,
 * when and on which machine it was measured (a benchmark not run keeps its last figures), and
 * the table between the markers in docs/performance.md is rewritten from it, so the day a
 * figure regresses shows in the diff. `--no-record` only prints.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FIGURES, type FigureValue, figuresTable, meets, thisMachine } from './figures.ts';

const BENCHES = [
  'engine-commit',
  'queue-latency',
  'startup',
  'feed-latency',
  'cli-start',
  'long-run',
  'fanout',
  'press-edit',
  'history',
  'sessions',
  'tasks',
  'workers',
  'console-runs',
  'console-upload',
  'tool-approval',
  'ledger-tail',
  'hostile-probes',
  'approval-digest',
] as const;
const here = dirname(fileURLToPath(import.meta.url));
const RESULTS = join(here, 'results.json');
const DOC = join(here, '..', 'docs', 'performance.md');
const MARK_START = '<!-- bench figures: start (written by npm run bench) -->';
const MARK_END = '<!-- bench figures: end -->';

const args = process.argv.slice(2);
const record = !args.includes('--no-record');
const wanted = args.filter((a) => !a.startsWith('--'));
const selected = wanted.length > 0 ? BENCHES.filter((b) => wanted.includes(b)) : [...BENCHES];

const results: Record<string, unknown> = {};
const figures: FigureValue[] = [];
for (const name of selected) {
  process.stderr.write(`bench: ${name}…\n`);
  const machine = thisMachine();
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
  const ranAt = new Date().toISOString();
  for (const spec of FIGURES.filter((f) => f.bench === name)) {
    const value = spec.read(results[name]);
    figures.push({
      id: spec.id,
      value: value ?? null,
      met: meets(spec.goal, value),
      ran_at: ranAt,
      machine,
    });
  }
}
console.log(JSON.stringify({ figures, benches: results }, null, 2));

if (record) {
  const last = readResults();
  for (const f of figures) last.set(f.id, f);
  const kept = FIGURES.flatMap((s) => last.get(s.id) ?? []);
  fs.writeFileSync(RESULTS, `${JSON.stringify({ figures: kept }, null, 2)}\n`);
  const doc = fs.readFileSync(DOC, 'utf8');
  const from = doc.indexOf(MARK_START);
  const to = doc.indexOf(MARK_END);
  if (from < 0 || to < from) throw new Error(`${DOC} lacks the figures markers`);
  const table = `${MARK_START}\n${figuresTable(kept)}\n${MARK_END}`;
  fs.writeFileSync(DOC, doc.slice(0, from) + table + doc.slice(to + MARK_END.length));
  process.stderr.write('bench: figures recorded in bench/results.json and docs/performance.md\n');
}

/** The last recorded figures by id (none when bench/results.json is missing). */
function readResults(): Map<string, FigureValue> {
  if (!fs.existsSync(RESULTS)) return new Map();
  const parsed = JSON.parse(fs.readFileSync(RESULTS, 'utf8')) as { figures: FigureValue[] };
  return new Map(parsed.figures.map((f) => [f.id, f]));
}
