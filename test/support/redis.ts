/**
 * A private Redis for tests: REDIS_URL when set, else a redis-server started on a free port
 * (no persistence) and stopped by its pid. Without either the BullMQ suites are skipped with a
 * loud banner, except in CI (CI=true) where a missing Redis is a failure.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from './process-alive.ts';
import { freePort, kill, waitFor } from './server-process.ts';
import { slow } from './slowdown.ts';

/** A running Redis; `stop` ends it if we started it (a REDIS_URL one is left alone). */
export interface RedisHandle {
  url: string;
  stop(): Promise<void>;
  /** Kills the private redis-server and starts an empty one on the same port (not for REDIS_URL). */
  restart?(): Promise<void>;
}

/** Whether tests can get a Redis, and how. */
export type RedisAvailability =
  | { ok: true; via: 'REDIS_URL' | 'redis-server' }
  | { ok: false; reason: string };

/** The banner printed when BullMQ tests are skipped for lack of Redis. */
export const NO_REDIS_BANNER = [
  '',
  '#'.repeat(78),
  '#  BullMQ job-queue tests SKIPPED: no redis-server binary and no REDIS_URL.',
  '#  Install Redis to run them:   apt-get install -y redis-server',
  '#  (or set REDIS_URL=redis://host:port). In CI (CI=true) this is a failure.',
  '#'.repeat(78),
  '',
].join('\n');

/** Checks for REDIS_URL or a redis-server binary on PATH, without starting anything. */
export function redisAvailable(): RedisAvailability {
  if (process.env.REDIS_URL) return { ok: true, via: 'REDIS_URL' };
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return { ok: true, via: 'redis-server' };
  } catch {
    return { ok: false, reason: 'no redis-server binary on PATH and REDIS_URL is not set' };
  }
}

/** True in CI, where missing infrastructure must fail the run instead of skipping tests. */
export function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0';
}

/** Returns REDIS_URL's Redis, or starts a private redis-server and waits until it answers PING. */
export async function startRedis(): Promise<RedisHandle> {
  const external = process.env.REDIS_URL;
  if (external) return { url: external, stop: async () => {} };
  const dir = mkdtempSync(join(tmpdir(), 'pb-redis-'));
  const port = await freePort();
  let pid = await launch(port, dir);
  // Never leave a daemon behind, even when the test process exits abruptly.
  const killOnExit = () => kill(pid, 'SIGKILL');
  process.once('exit', killOnExit);
  return {
    url: `redis://127.0.0.1:${port}`,
    restart: async () => {
      kill(pid, 'SIGKILL');
      await waitFor(async () => !processAlive(pid), 5000, `redis-server ${pid} did not die`);
      pid = await launch(port, dir);
    },
    stop: async () => {
      process.off('exit', killOnExit);
      kill(pid, 'SIGTERM');
      await waitFor(async () => !processAlive(pid), 5000, `redis-server ${pid} did not stop`).catch(
        () => kill(pid, 'SIGKILL'),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Starts redis-server (no persistence) on `port`; resolves with its pid once it answers. A restart
 * found the port still taken (a few in 100 beside busy suites: "bind: Address already in use"):
 * the killed daemon's main thread is a zombie, so processAlive says gone, while its other threads,
 * which share its sockets, are still exiting. The start is tried again until the deadline.
 */
async function launch(port: number, dir: string): Promise<number> {
  const pidFile = join(dir, 'redis.pid');
  const logFile = join(dir, 'redis.log');
  const deadline = Date.now() + slow(5000);
  for (;;) {
    rmSync(pidFile, { force: true });
    rmSync(logFile, { force: true });
    startDaemon(port, dir, pidFile, logFile);
    let said = '';
    while (Date.now() < deadline) {
      if (await ping(port)) return Number(readFileSync(pidFile, 'utf8').trim());
      said = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
      if (said.includes('Address already in use')) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    if (Date.now() >= deadline) {
      // A daemon that failed to start says why only in its log.
      const log = said.trim().slice(-600);
      throw new Error(
        `redis-server on port ${port} did not answer PING${log ? `; its log: ${log}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Forks a redis-server daemon on `port` that writes its pid and its log in `dir`. */
function startDaemon(port: number, dir: string, pidFile: string, logFile: string): void {
  execFileSync(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
      '--pidfile',
      pidFile,
      '--dir',
      dir,
      '--loglevel',
      'warning',
      '--logfile',
      logFile,
    ],
    { stdio: 'ignore' },
  );
}

/** True when a Redis on `port` answers PING with +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (data) => done(data.toString().startsWith('+PONG')));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
  });
}
