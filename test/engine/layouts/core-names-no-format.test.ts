/**
 * Issue 37: the core never asks which format a run is in. Outside `src/engine/layouts/`, no code
 * branches on a layout's name, no second list of layouts is written out, and the model's preset
 * types (pabcd phases, tasks) do not import the model back. A new branch or list fails here.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { layoutNames } from '../../../src/engine/layouts/index.ts';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const src = path.join(repo, 'src');
const layoutsDir = path.join(src, 'engine', 'layouts');
const NAMES = layoutNames().join('|');
const Q = `['"\`]`;

/** `layout === 'flow'`, `run.layout !== "codemachine"`, `'flow' === state.layout`. */
const BRANCH = new RegExp(
  `\\blayout\\s*[!=]==?\\s*${Q}|${Q}(?:${NAMES})${Q}\\s*[!=]==?\\s*[\\w.?]*layout\\b`,
);
/** Three or more layout names in one list or union: `['native', 'flow', …]`, `'a' | 'b' | 'c'`. */
const LIST = new RegExp(`(?:${Q}(?:${NAMES})${Q}\\s*[,|]\\s*){2,}${Q}(?:${NAMES})${Q}`);

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(p);
    return e.name.endsWith('.ts') ? [p] : [];
  });
}

const core = sourceFiles(src).filter((f) => !f.startsWith(`${layoutsDir}${path.sep}`));

/** Every `file:line: text` of the core matching `pattern` (a list may span lines). */
function hits(pattern: RegExp): string[] {
  return core.flatMap((file) => {
    const text = fs.readFileSync(file, 'utf8');
    const rel = path.relative(repo, file);
    const global = new RegExp(pattern.source, 'g');
    return [...text.matchAll(global)].map((m) => {
      const line = text.slice(0, m.index).split('\n').length;
      return `${rel}:${line}: ${m[0]}`;
    });
  });
}

describe('the core names no format', () => {
  it('the checks recognise a branch and a list (so an empty result means something)', () => {
    expect(BRANCH.test("if (state.layout === 'flow') return;")).toBe(true);
    expect(BRANCH.test('if (run.layout !== "codemachine") continue;')).toBe(true);
    expect(BRANCH.test("if ('coordinator' === ctx.state.layout) x();")).toBe(true);
    expect(BRANCH.test('if (layoutModule(state.layout)?.handEdits === undefined) x();')).toBe(
      false,
    );
    expect(LIST.test("z.enum(['native', 'codemachine',\n  'codexclaw'])")).toBe(true);
    expect(LIST.test("type L = 'native' | 'flow' | 'coordinator';")).toBe(true);
    expect(core.length).toBeGreaterThan(100);
  });

  it('no code outside src/engine/layouts/ branches on a layout name', () => {
    expect(hits(BRANCH)).toEqual([]);
  });

  it('no code outside src/engine/layouts/ writes out the list of layouts', () => {
    expect(hits(LIST)).toEqual([]);
  });
});

/**
 * Core files that still import a format's own folder (issue 37's leftovers: codemachine's
 * registry rows for agent runs, the coordinator's and flow's interrupted sessions). The list
 * only shrinks: a new import of a format's folder goes through its module.
 */
const KNOWN_FORMAT_IMPORTS = [
  'src/jobs/orchestrator/flow-sessions.ts',
  'src/jobs/orchestrator/remote-registry.ts',
  'src/jobs/orchestrator/sessions.ts',
  'src/jobs/orchestrator/step-processor.ts',
];

describe('the core reaches a format through its module', () => {
  it("no other core file imports a format's folder (hand edits, follow: module hooks)", () => {
    const folders = layoutNames().filter((n) => fs.existsSync(path.join(layoutsDir, n)));
    const pattern = new RegExp(`layouts/(?:${folders.join('|')})/`);
    const importing = core
      .filter((file) => pattern.test(fs.readFileSync(file, 'utf8')))
      .map((file) => path.relative(repo, file).split(path.sep).join('/'))
      .sort();
    expect(folders.length).toBeGreaterThan(3);
    expect(importing).toEqual(KNOWN_FORMAT_IMPORTS);
  });
});

/** The relative modules `file` imports (static `from '…'`, type imports included). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)].map((m) =>
    path.resolve(path.dirname(file), m[1]!),
  );
}

/** A chain of imports from `start` back to `target`, or null when there is none. */
function chainTo(start: string, target: string): string[] | null {
  const seen = new Set<string>();
  const walk = (file: string, chain: string[]): string[] | null => {
    if (file === target) return chain;
    if (seen.has(file) || !fs.existsSync(file)) return null;
    seen.add(file);
    for (const next of importsOf(file)) {
      const found = walk(next, [...chain, path.relative(src, next)]);
      if (found !== null) return found;
    }
    return null;
  };
  return walk(start, [path.relative(src, start)]);
}

describe('the engine model and its presets', () => {
  const model = path.join(src, 'engine', 'model.ts');
  const presets = importsOf(model).filter((f) => /[/\\](pabcd|tasks)[/\\]/.test(f));

  it('the model takes types from the pabcd and tasks presets', () => {
    expect(presets.map((f) => path.relative(src, f)).sort()).toEqual([
      path.join('engine', 'pabcd', 'phases.ts'),
      path.join('engine', 'tasks', 'types.ts'),
    ]);
  });

  it('those preset files never import the model back', () => {
    for (const preset of presets) expect(chainTo(preset, model)).toBeNull();
  });
});
