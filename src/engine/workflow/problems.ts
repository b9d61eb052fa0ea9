/**
 * Problems found in a workflow file, as `{path, message}`: zod issues rewritten for humans, and
 * the cross-field rules zod cannot express. Cross checks read the raw document defensively so
 * they still run (and report) when the schema already failed elsewhere.
 */
import type { core } from 'zod';

/** One problem: a field path like `steps[2].loop.backTo` and what is wrong with it. */
export interface Problem {
  path: string;
  message: string;
}

/** `['steps', 2, 'loop']` → `steps[2].loop`; the empty path is `(root)`. */
export function formatPath(parts: readonly PropertyKey[]): string {
  let out = '';
  for (const p of parts) {
    out += typeof p === 'number' ? `[${p}]` : `${out === '' ? '' : '.'}${String(p)}`;
  }
  return out === '' ? '(root)' : out;
}

/** Zod issues as problems; an unknown key is reported at its own path. */
export function zodProblems(issues: readonly core.$ZodIssue[]): Problem[] {
  return issues.flatMap((issue): Problem[] => {
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((k) => ({
        path: formatPath([...issue.path, k]),
        message: 'unknown key',
      }));
    }
    const message = issue.message.endsWith('received undefined') ? 'is required' : issue.message;
    return [{ path: formatPath(issue.path), message }];
  });
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strings(v: unknown): string[] | undefined {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined;
}

/**
 * Rules across fields: duplicate step ids, prompt xor promptFile, known agents (steps and
 * subagents), loop.backTo names
 * an earlier step, step tracks/conditions are declared at the top, onExpiry needs expiresIn.
 */
export function crossCheck(raw: unknown, knownAgents?: readonly string[]): Problem[] {
  if (!isObj(raw) || !Array.isArray(raw.steps)) return [];
  const problems: Problem[] = [];
  const add = (parts: PropertyKey[], message: string) =>
    problems.push({ path: formatPath(parts), message });
  const firstIndex = new Map<string, number>();
  raw.steps.forEach((s, i) => {
    if (!isObj(s) || typeof s.id !== 'string') return;
    const seen = firstIndex.get(s.id);
    if (seen === undefined) firstIndex.set(s.id, i);
    else add(['steps', i, 'id'], `duplicate step id "${s.id}" (also steps[${seen}])`);
  });
  raw.steps.forEach((s, i) => {
    if (!isObj(s)) return;
    if (s.prompt !== undefined && s.promptFile !== undefined) {
      add(['steps', i], 'give either prompt or promptFile, not both');
    } else if (s.prompt === undefined && s.promptFile === undefined) {
      add(['steps', i, 'prompt'], 'is required (or promptFile)');
    }
    if (knownAgents && typeof s.agent === 'string' && !knownAgents.includes(s.agent)) {
      const known = knownAgents.length > 0 ? knownAgents.join(', ') : 'none';
      add(['steps', i, 'agent'], `unknown agent "${s.agent}" (known: ${known})`);
    }
    if (isObj(s.loop) && typeof s.loop.backTo === 'string') {
      const target = firstIndex.get(s.loop.backTo);
      if (target === undefined) add(['steps', i, 'loop', 'backTo'], `no step "${s.loop.backTo}"`);
      else if (target >= i) {
        add(
          ['steps', i, 'loop', 'backTo'],
          `step "${s.loop.backTo}" is not earlier than this step`,
        );
      }
    }
    for (const key of ['tracks', 'conditions'] as const) {
      const declared = strings(raw[key]) ?? [];
      for (const name of strings(s[key]) ?? []) {
        if (!declared.includes(name)) {
          add(['steps', i, key], `"${name}" is not declared in the top-level ${key}`);
        }
      }
    }
    if (isObj(s.checkpoint) && s.checkpoint.onExpiry !== undefined) {
      if (s.checkpoint.expiresIn === undefined) {
        add(['steps', i, 'checkpoint', 'onExpiry'], 'has no effect without expiresIn');
      }
    }
  });
  if (knownAgents) {
    for (const [i, name] of (strings(raw.subagents) ?? []).entries()) {
      if (!knownAgents.includes(name)) add(['subagents', i], `unknown agent "${name}"`);
    }
  }
  return problems;
}
