/**
 * Engine readiness for `doctor`: for each engine a named agent uses (claude, codex), one line
 * each for the binary and its version, whether it is logged in (`claude auth status`, `codex
 * login status`), and whether that version accepts the flags phasebridge passes (the posture
 * table's flags included). Read-only: nothing here starts an agent on a prompt.
 */
import { execFile } from 'node:child_process';
import type { AgentRecord } from '../db/repositories/agents.ts';
import { probeArgvs } from '../jobs/orchestrator/agent-resolver-argv.ts';
import { fixFor, missingBinaryFix } from '../jobs/runner/failure/known-causes.ts';
import type { CheckResult } from './doctor-checks.ts';

const TIMEOUT_MS = 15_000;

/** What a finished command printed; `missing` when its binary was not found. */
interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  missing: boolean;
}

function run(file: string, args: readonly string[], env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    execFile(
      file,
      [...args],
      { env, timeout: TIMEOUT_MS, maxBuffer: 4 * 1024 * 1024, windowsHide: true },
      (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
        resolve({
          code: e === null ? 0 : typeof e.code === 'number' ? e.code : null,
          stdout: String(stdout),
          stderr: String(stderr),
          missing: e?.code === 'ENOENT',
        });
      },
    );
  });
}

/** The first line that says "error", else the last non-empty line of a command's output. */
function errorLine(r: Ran): string {
  const lines = `${r.stderr}\n${r.stdout}`
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => /^error\b/i.test(l)) ?? lines.at(-1) ?? `exit code ${r.code}`;
}

/** One engine binary and the argvs its agents get. */
interface EngineUse {
  engine: 'claude' | 'codex';
  file: string;
  argvs: string[][];
}

/** Groups enabled claude/codex agents by engine and binary, with the argv each would run. */
export function engineUses(agents: readonly AgentRecord[]): EngineUse[] {
  const uses = new Map<string, EngineUse>();
  for (const a of agents) {
    if (!a.enabled || a.engine === 'command') continue;
    for (const argv of probeArgvs(a)) {
      const [file, ...args] = argv;
      const key = `${a.engine}\0${file}`;
      const use = uses.get(key) ?? { engine: a.engine, file: file!, argvs: [] };
      use.argvs.push(args);
      uses.set(key, use);
    }
  }
  return [...uses.values()];
}

async function versionCheck(use: EngineUse, env: NodeJS.ProcessEnv): Promise<CheckResult | null> {
  const name = `engine ${use.engine}`;
  const r = await run(use.file, ['--version'], env);
  if (r.missing) {
    return {
      name,
      ok: false,
      detail: `${use.file} not found`,
      fix: missingBinaryFix(use.engine, use.file),
    };
  }
  if (r.code !== 0) {
    return { name, ok: false, detail: `${use.file} --version failed: ${errorLine(r)}` };
  }
  const version = r.stdout.trim().split('\n')[0] ?? '';
  return { name, ok: true, detail: `${use.file} ${version}` };
}

async function loginCheck(use: EngineUse, env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = `engine ${use.engine} login`;
  const key = use.engine === 'claude' ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  const args = use.engine === 'claude' ? ['auth', 'status'] : ['login', 'status'];
  const r = await run(use.file, args, env);
  if (r.code === 0) {
    const how = /"authMethod":\s*"([^"]+)"/.exec(r.stdout)?.[1] ?? errorLine(r);
    return { name, ok: true, detail: `logged in (${how})` };
  }
  if (env[key]) return { name, ok: true, detail: `not logged in, but ${key} is set` };
  const said = use.engine === 'claude' ? 'Not logged in · Please run /login' : 'not logged in';
  const how = /"authMethod":\s*"([^"]+)"/.exec(r.stdout)?.[1];
  const told = how === undefined ? errorLine(r).slice(0, 120) : `authMethod ${how}`;
  return {
    name,
    ok: false,
    detail: `not logged in (\`${use.file} ${args.join(' ')}\`: ${told})`,
    fix: fixFor(use.engine === 'claude' ? said : 'codex login') ?? undefined,
  };
}

/** Claude's parser ignores unknown options next to --help, so its help text is read instead. */
function claudeFlagProblems(help: string, args: readonly string[]): string[] {
  const problems: string[] = [];
  args.forEach((a, i) => {
    if (!a.startsWith('--')) return;
    if (!help.includes(a)) problems.push(`${a} is not an option of this version`);
    if (a === '--permission-mode' && !help.includes(`"${args[i + 1]}"`)) {
      problems.push(`--permission-mode ${args[i + 1]} is not a mode of this version`);
    }
  });
  return problems;
}

async function flagsCheck(use: EngineUse, env: NodeJS.ProcessEnv): Promise<CheckResult> {
  const name = `engine ${use.engine} flags`;
  const problems = new Set<string>();
  if (use.engine === 'claude') {
    const help = await run(use.file, ['--help'], env);
    for (const args of use.argvs)
      for (const p of claudeFlagProblems(help.stdout, args)) problems.add(p);
  } else {
    // Codex's parser rejects an unknown flag or value even with --help: let it judge the argv.
    for (const args of use.argvs) {
      const r = await run(use.file, [...args.filter((a) => a !== '-'), '--help'], env);
      if (r.code !== 0) problems.add(errorLine(r));
    }
  }
  if (problems.size === 0) {
    return { name, ok: true, detail: `${use.argvs.length} argv(s) accepted by ${use.file}` };
  }
  return {
    name,
    ok: false,
    detail: [...problems].join('; '),
    fix: `upgrade the CLI (npm install -g ${use.engine === 'claude' ? '@anthropic-ai/claude-code' : '@openai/codex'}) or change the agent's argv/permissions`,
  };
}

/** The engine lines of `doctor` for these agents (none when no agent uses claude or codex). */
export async function checkEngines(
  agents: readonly AgentRecord[],
  env: NodeJS.ProcessEnv = process.env,
): Promise<CheckResult[]> {
  const results: CheckResult[] = [];
  for (const use of engineUses(agents)) {
    const version = await versionCheck(use, env);
    if (version !== null) results.push(version);
    if (version !== null && !version.ok) continue;
    results.push(await loginCheck(use, env), await flagsCheck(use, env));
  }
  return results;
}
