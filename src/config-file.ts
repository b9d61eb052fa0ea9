/**
 * The optional `phasebridge.config.yaml`: read, parsed and checked for secrets (which come from
 * the environment only). Every problem is added to `problems` with its fix; the schema in
 * config.ts validates what is returned.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { READ_LIMITS, readRegularFile, UnsafePathError } from './engine/ledger/safe-path.ts';
import { yamlDepthProblem } from './engine/workflow/yaml-limits.ts';
import type { ConfigProblem } from './errors.ts';

/**
 * The settings in `path` (empty when it is missing and was not asked for by name). `secrets`
 * maps each secret config path (`redisUrl`, `telegram.botToken` …) to its env name; one found
 * in the file is reported and dropped.
 */
export function readConfigFile(
  path: string,
  named: boolean,
  secrets: ReadonlyMap<string, string>,
  problems: ConfigProblem[],
): Record<string, unknown> {
  if (!existsSync(path)) {
    if (named) {
      problems.push({
        path: 'file',
        problem: `${path} does not exist`,
        fix: 'create it or unset PHASEBRIDGE_CONFIG',
      });
    }
    return {};
  }
  let text: string;
  try {
    // Never blocks (a FIFO, /dev/zero are refused) and never reads more than 1 MB.
    const data = readRegularFile(path, { limit: READ_LIMITS.config, followLink: true });
    text = data?.toString('utf8') ?? '';
  } catch (err) {
    const why =
      err instanceof UnsafePathError
        ? err.message.replace(/^refusing \S+: /, '')
        : ((err as NodeJS.ErrnoException).code ?? (err as Error).message);
    problems.push({
      path,
      problem: `cannot be read (${why})`,
      fix: 'make it a file this user can read, or point PHASEBRIDGE_CONFIG elsewhere',
    });
    return {};
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (err) {
    const bomb = err instanceof ReferenceError;
    problems.push({
      path,
      problem: `is not valid YAML (${(err as Error).message})`,
      fix: bomb ? 'use fewer aliases (*name) in it' : 'correct the YAML syntax',
    });
    return {};
  }
  if (doc == null) return {};
  if (!isPlainObject(doc)) {
    problems.push({
      path,
      problem: 'must be a mapping of settings',
      fix: 'see docs/configuration.md',
    });
    return {};
  }
  dropSecrets(doc, '', path, secrets, problems);
  return doc;
}

/** Removes (and reports) secret settings at the top level and one section deep. */
function dropSecrets(
  doc: Record<string, unknown>,
  prefix: string,
  path: string,
  secrets: ReadonlyMap<string, string>,
  problems: ConfigProblem[],
): void {
  for (const [key, value] of Object.entries(doc)) {
    const at = `${prefix}${key}`;
    const env = secrets.get(at);
    if (env !== undefined) {
      problems.push({
        path: `${path}: ${at}`,
        problem: 'secrets are not read from files',
        fix: `remove it from the file and set ${env} in the environment`,
      });
      delete doc[key];
    } else if (prefix === '' && isPlainObject(value)) {
      dropSecrets(value, `${key}.`, path, secrets, problems);
    }
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Parses the file's YAML. The parser is required only when a file exists: most setups have
 * none, and every CLI command would otherwise load it (a quarter of a megabyte of code).
 */
function parseYaml(text: string): unknown {
  const deep = yamlDepthProblem(text);
  if (deep !== null) throw new Error(deep);
  const { parse } = createRequire(import.meta.url)('yaml') as typeof import('yaml');
  // An explicit alias limit: a config never needs many, an alias bomb needs millions.
  try {
    return parse(text, { maxAliasCount: 100, logLevel: 'error' });
  } catch (err) {
    if (err instanceof ReferenceError) throw err;
    // One line: the parser's message carries a multi-line excerpt of the file.
    throw new Error((err as Error).message.split('\n')[0]!.replace(/:$/, ''), { cause: err });
  }
}
