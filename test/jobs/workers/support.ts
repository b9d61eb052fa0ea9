/**
 * Pieces of the remote-worker tests: a local bare repository with a workspace cloned from it
 * (git mode), real `phasebridge worker` processes with their own empty homes, and a bridge-side
 * orchestrator on BullMQ that runs no jobs itself.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createBullmqQueue } from '../../../src/jobs/queue/bullmq-driver.ts';
import { bullmqLease } from '../../../src/jobs/queue/create-queue.ts';
import type { JobQueue } from '../../../src/jobs/queue/port.ts';

const BIN = path.resolve(import.meta.dirname, '../../../bin/phasebridge.js');
/** The scripted agent of these tests. */
export const GIT_AGENT = path.resolve(import.meta.dirname, 'fixtures/git-agent.mjs');
/**
 * Lease of the worker processes: short enough that a killed worker's job is taken again within
 * seconds, long enough that a busy machine does not make a live worker look stalled.
 */
export const LEASE_MS = 4000;

/** Runs git with a fixed identity (the machine may have none). */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    encoding: 'utf8',
  }).trim();
}

/** A bare repository `origin.git` and the bridge's workspace cloned from it with one commit. */
export function gitFixture(dir: string, workspace: string): { origin: string } {
  const origin = path.join(dir, 'origin.git');
  fs.mkdirSync(origin, { recursive: true });
  git(origin, 'init', '--quiet', '--bare', '--initial-branch=main');
  fs.mkdirSync(workspace, { recursive: true });
  git(workspace, 'init', '--quiet', '--initial-branch=main');
  fs.writeFileSync(path.join(workspace, 'README.md'), 'hello\n');
  fs.writeFileSync(path.join(workspace, '.gitignore'), '.phasebridge/\nworkflows/\n');
  git(workspace, 'add', '.');
  git(workspace, 'commit', '--quiet', '-m', 'initial');
  git(workspace, 'remote', 'add', 'origin', origin);
  git(workspace, 'push', '--quiet', 'origin', 'main');
  return { origin };
}

/** The bridge's BullMQ queue with the tests' lease (or `leaseMs`). */
export function bridgeQueue(url: string, leaseMs = LEASE_MS): Promise<JobQueue> {
  return createBullmqQueue({ url, ...bullmqLease(leaseMs) });
}

/** A `phasebridge worker` process. */
export interface WorkerProcess {
  child: ChildProcess;
  home: string;
  /** Its stdout so far. */
  out(): string;
  /** SIGTERM and wait for the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a machine that vanished) and wait until it is gone. */
  kill(): Promise<void>;
}

/** Starts `phasebridge worker` with an empty home; resolves once it runs jobs. */
export async function startWorker(
  redisUrl: string,
  home: string,
  args: string[] = [],
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  fs.mkdirSync(home, { recursive: true });
  const child = spawn(process.execPath, [BIN, 'worker', '--concurrency', '1', ...args], {
    cwd: home,
    env: {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: home,
      REDIS_URL: redisUrl,
      PHASEBRIDGE_JOB_LEASE_MS: String(LEASE_MS),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    err += d;
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (out.includes('running jobs from BullMQ')) resolve();
    };
    child.stdout!.on('data', check);
    void exited.then((code) => reject(new Error(`worker exited (${code}): ${err}`)));
  });
  return {
    child,
    home,
    out: () => out,
    stop: async () => {
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** Builds dist/ once so parallel worker processes do not each try to. */
export function ensureBuilt(): void {
  execFileSync(process.execPath, [BIN, '--version'], { stdio: 'ignore' });
}
