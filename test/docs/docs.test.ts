/**
 * The docs are checked like code: every relative link (and its anchor) resolves, every
 * `phasebridge <command>` they name exists, every PHASEBRIDGE_* name they give is one the code
 * reads or sets, and every setting, CLI command and chat command is documented under docs/.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { VERBS } from '../../src/chatops/grammar.ts';
import { CliContext } from '../../src/cli/context.ts';
import { buildProgram } from '../../src/cli/program.ts';
import { CONFIG_ENV_NAMES } from '../../src/config.ts';
import { chainAgent } from '../../src/jobs/orchestrator/chain-runner.ts';
import { buildAgentEnv } from '../../src/jobs/runner/env.ts';
import { FEEDBACK_FILE_ENV } from '../../src/jobs/runner/feedback.ts';
import { codeSpans, headingAnchors, relativeLinks, splitFences } from './markdown.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const DOCS = ['README.md', ...readdirSync(join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) =>
  f.endsWith('.md'),
);
const text = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

/** Every file under `dir` (relative to the root) whose name ends with one of `exts`. */
function filesUnder(dir: string, exts: readonly string[]): string[] {
  const entries = readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && exts.some((x) => e.name.endsWith(x)))
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));
}

/** Why `target`, linked from `file` (relative to `base`, default its folder), does not resolve. */
function brokenLink(file: string, target: string, base = dirname(file)): string | undefined {
  const [path = '', anchor] = target.split('#') as [string, string | undefined];
  const resolved = path === '' ? join(ROOT, file) : resolve(ROOT, base, path);
  if (!existsSync(resolved)) return `${file}: ${target}: no such file`;
  if (anchor === undefined || !resolved.endsWith('.md')) return undefined;
  const anchors = headingAnchors(readFileSync(resolved, 'utf8'));
  return anchors.has(decodeURIComponent(anchor))
    ? undefined
    : `${file}: ${target}: no such heading`;
}

describe('docs', () => {
  it('link only to files and headings that exist', () => {
    const broken = DOCS.flatMap((file) =>
      relativeLinks(splitFences(text(file)).prose).flatMap((t) => brokenLink(file, t) ?? []),
    );
    expect(broken).toEqual([]);
  });

  it('are named by the code only where they exist', () => {
    const broken = filesUnder('src', ['.ts']).flatMap((file) =>
      [...text(file).matchAll(/\bdocs\/[\w-]+\.md(?:#[\w-]+)?/g)].flatMap(
        (m) => brokenLink(file, m[0], '.') ?? [],
      ),
    );
    expect(broken).toEqual([]);
  });

  it('name only CLI commands, subcommands and options that exist', () => {
    const unknown = namedCommands(DOCS)
      .filter((c) => !c.exists)
      .map((c) => `${c.file}: ${c.command}`);
    expect(unknown).toEqual([]);
  });

  it('name only PHASEBRIDGE_* variables the code reads or sets', () => {
    const known = new Set([...CONFIG_ENV_NAMES, ...agentEnvNames(), ...toolingEnvNames()]);
    const unknown = DOCS.flatMap((file) =>
      [...text(file).matchAll(/\bPHASEBRIDGE_[A-Z0-9_]+/g)]
        .filter((m) => !known.has(m[0]))
        .map((m) => `${file}: ${m[0]}`),
    );
    expect(unknown).toEqual([]);
  });

  it('document under docs/ every setting, CLI command and chat command', () => {
    const docs = DOCS.filter((f) => f.startsWith('docs/'))
      .map(text)
      .join('\n');
    const named = new Set(
      namedCommands(DOCS.filter((f) => f.startsWith('docs/'))).map((c) => c.command),
    );
    const spans = codeSpans(splitFences(docs).prose);
    const verbs = new Set(
      spans.flatMap((s) =>
        s
          .replace(/^\/(pb )?/, '')
          .split(/\s/)[0]!
          .split(/\\?\|/),
      ),
    );
    const missing = [
      ...CONFIG_ENV_NAMES.filter((name) => !docs.includes(`\`${name}\``)),
      ...PROGRAM.commands
        .map((c) => `phasebridge ${c.name()}`)
        .filter((command) => !named.has(command)),
      ...VERBS.filter((verb) => !verbs.has(verb)).map((v) => `chat ${v}`),
    ];
    expect(missing).toEqual([]);
  });
});

const PROGRAM = await buildProgram(new CliContext());

/**
 * Every `phasebridge <command> [subcommand]` the files name (each alternative of `a\|b`), and
 * each `--option` written after it, checked against what that command accepts.
 */
function namedCommands(files: readonly string[]) {
  const find = (parent: Command, name: string) =>
    parent.commands.find((c) => c.name() === name || c.aliases().includes(name));
  const alternatives = (word: string) => word.split(/\\?\|/);
  const named: { file: string; command: string; exists: boolean }[] = [];
  for (const [file, line] of commandLines(files)) {
    const m = /^(?:npx\s+)?phasebridge\s+([a-z][\w|\\-]*)(?:\s+([a-z][\w|\\-]*))?/.exec(line);
    if (!m) continue;
    const resolved: Command[] = [];
    for (const name of alternatives(m[1]!)) {
      const command = find(PROGRAM, name);
      named.push({ file, command: `phasebridge ${name}`, exists: command !== undefined });
      if (command === undefined) continue;
      if (command.commands.length === 0 || m[2] === undefined) {
        resolved.push(command);
        continue;
      }
      for (const sub of alternatives(m[2])) {
        const subcommand = find(command, sub);
        named.push({ file, command: `phasebridge ${name} ${sub}`, exists: !!subcommand });
        if (subcommand) resolved.push(subcommand);
      }
    }
    // Options up to a bare `--`, after which an agent's own argv follows.
    const flags = line.split(/\s--(?:\s|$)/)[0]!.match(/(?<=[\s[(])--[a-z][\w-]*/g) ?? [];
    for (const flag of resolved.length > 0 ? flags : []) {
      const accepts = (c: Command) =>
        flag === '--help' ||
        c.options.some((o) => o.long === flag || o.long === `--no-${flag.slice(2)}`);
      const exists = resolved.some(accepts);
      named.push({ file, command: `phasebridge ${m[1]} ${flag}`, exists });
    }
  }
  return named;
}

/**
 * Lines that may show a `phasebridge` command: each code span (a message quoted in one that
 * mentions phasebridge mid-sentence is not a command) and each line of a shell block (output
 * samples, in other blocks, are not commands).
 */
function* commandLines(files: readonly string[]): Generator<[string, string]> {
  for (const file of files) {
    const { prose, fences } = splitFences(text(file));
    for (const span of codeSpans(prose)) yield [file, span.trim()];
    for (const fence of fences.filter((f) => /^(sh|bash|shell|console)$/.test(f.lang))) {
      for (const line of fence.lines) yield [file, line.replace(/^\s*\$?\s*/, '')];
    }
  }
}

/** The PHASEBRIDGE_* variables an agent is given: per step, per chained prompt, for feedback. */
function agentEnvNames(): string[] {
  const stepEnv = buildAgentEnv({
    baseEnv: {},
    agentEnv: {},
    runId: 'r',
    stepId: 's',
    directiveFile: 'd',
    specFile: 'f',
  });
  const agent = { name: 'a', engine: 'command' as const, argv: ['true'], env: {} };
  return [
    ...Object.keys(stepEnv),
    ...Object.keys(chainAgent(agent, 1, 'x').env),
    FEEDBACK_FILE_ENV,
  ];
}

/** PHASEBRIDGE_* variables the bin, scripts, benchmarks and test support read. */
function toolingEnvNames(): string[] {
  const files = ['bin', 'scripts', 'bench', 'test/support'].flatMap((d) =>
    filesUnder(d, ['.ts', '.js', '.mjs']),
  );
  return files.flatMap((f) =>
    [...text(f).matchAll(/env(?:\.|\[['"])(PHASEBRIDGE_[A-Z0-9_]+)/g)].map((m) => m[1]!),
  );
}
