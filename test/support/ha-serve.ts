/**
 * `phasebridge serve` processes sharing one postgres and one redis-server (issue 33): started on
 * a free port each with their own home and a shared workspace, their output kept for messages,
 * and their `/readyz` role asked. Used by test/app/serve-failover.test.ts and bench/failover.ts.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { freePort } from './server-process.ts';
import { waitUntil } from './slowdown.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');

/** One running `serve`. */
export interface ServeProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly url: string;
  /** Resolves with the exit code (null when killed by a signal). */
  readonly exited: Promise<number | null>;
  /** Its stdout and stderr so far. */
  output(): string;
  /** SIGCONT (a paused one must be able to stop), SIGTERM, and waits for the exit. */
  stop(): Promise<void>;
}

/**
 * Starts `serve` in `dir` with home `<dir>/home-<name>`, `env` on top of PATH and `args` after
 * `serve` (`--concurrency 0`: only `phasebridge worker` processes run the steps).
 */
export async function spawnServe(o: {
  name: string;
  dir: string;
  env: Readonly<Record<string, string>>;
  args?: readonly string[];
}): Promise<ServeProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'serve', ...(o.args ?? [])], {
    cwd: o.dir,
    env: {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: path.join(o.dir, `home-${o.name}`),
      PHASEBRIDGE_PORT: String(port),
      ...o.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const keep = (c: Buffer) => {
    out += c.toString();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return {
    name: o.name,
    child,
    url: `http://127.0.0.1:${port}`,
    exited,
    output: () => out,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGTERM');
      }
      await exited;
    },
  };
}

/** `/readyz`'s role (`leader`, `standby`), or undefined while nothing answers there. */
export async function roleOf(s: ServeProcess): Promise<string | undefined> {
  try {
    const res = await fetch(`${s.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
    return ((await res.json()) as { role?: string }).role;
  } catch {
    return undefined;
  }
}

/** Waits until `s`'s /readyz names `role`; the failure shows its log. */
export function waitForRole(s: ServeProcess, role: string): Promise<unknown> {
  return waitUntil(async () => (await roleOf(s)) === role, {
    timeoutMs: 60_000,
    message: `${s.name} is not ${role}:
${s.output()}`,
  });
}
