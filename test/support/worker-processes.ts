/**
 * `phasebridge worker` processes for tests and benchmarks: started on a home and a queue (REDIS_URL
 * for BullMQ), each stopped by its own pid. The task logs' `worker pid` lines (printed by the demo
 * agent) say which process ran which job.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/phasebridge.js');

/** A started worker process. */
export interface WorkerProcess {
  pid: number;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then waits for the exit (SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Starts `phasebridge worker --concurrency n` and resolves once it takes jobs. */
export async function startWorkerProcess(opts: {
  home: string;
  redisUrl?: string;
  concurrency: number;
  env?: Record<string, string>;
  /** More `phasebridge worker` arguments (`--label gpu`). */
  args?: string[];
}): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    [BIN, 'worker', '--concurrency', String(opts.concurrency), ...(opts.args ?? [])],
    {
      env: {
        PATH: process.env.PATH ?? '',
        PHASEBRIDGE_HOME: opts.home,
        LOG_LEVEL: 'warn',
        ...(opts.redisUrl ? { REDIS_URL: opts.redisUrl } : {}),
        ...opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (out.includes('running jobs from')) resolve();
    };
    child.stdout?.on('data', check);
    child.once('exit', (code) => reject(new Error(`worker exited with ${code}: ${out}`)));
  });
  return {
    pid: child.pid!,
    child,
    output: () => out,
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The worker pid a demo agent's log names (`demo-agent: pid X, worker pid Y`), or null. */
export function workerPidOfLog(log: string): number | null {
  const m = /demo-agent: pid \d+, worker pid (\d+)/.exec(log);
  return m ? Number(m[1]) : null;
}
