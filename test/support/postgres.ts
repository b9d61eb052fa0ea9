/**
 * A private Postgres for tests, like test/support/redis.ts: `initdb` in a temp folder, `postgres`
 * on a free 127.0.0.1 port (socket in the same folder), waited for by polling a connect, stopped
 * by its pid, the folder removed. initdb refuses to run as root, so as root both run as the
 * `postgres` user (Debian's package creates it) or else `nobody`, through `setpriv`, which execs
 * in place: the pid we hold is the postmaster's own. Without the binaries, suites skip with
 * NO_POSTGRES_LINE (CI installs Debian `postgresql` in .ci/run).
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, kill, waitFor } from './server-process.ts';

/** The line printed (and the skip reason) when no Postgres binaries are found. */
export const NO_POSTGRES_LINE = 'postgres not found: apt-get install postgresql';

/** A running private Postgres. */
export interface PostgresHandle {
  /** URL of the maintenance database `postgres` (superuser `phasebridge`, trust auth). */
  readonly url: string;
  /** The temp folder holding the data directory and the socket (removed by `stop`). */
  readonly dir: string;
  /**
   * Creates a database (empty, or a copy of `template`) and returns its URL: one per test keeps
   * tests apart.
   */
  createDatabase(template?: string): Promise<string>;
  /** Stops the server by pid (fast shutdown, SIGKILL after a deadline) and removes the folder. */
  stop(): Promise<void>;
}

/** The folder holding `postgres` and `initdb`: PATH first, then Debian's /usr/lib/postgresql/N/bin. */
export function postgresBinDir(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb')))
      return dir;
  }
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return undefined;
  // Newest major first.
  const majors = readdirSync(debian).sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const dir = join(debian, major, 'bin');
    if (existsSync(join(dir, 'postgres')) && existsSync(join(dir, 'initdb'))) return dir;
  }
  return undefined;
}

/** uid/gid to run as when we are root (initdb refuses root), else undefined. */
function unprivileged(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  // /etc/passwd rather than `id`: one fewer child process, same answer on Debian.
  const users = new Map(
    readFileSync('/etc/passwd', 'utf8')
      .split('\n')
      .map((line) => line.split(':'))
      .filter((f) => f.length > 3)
      .map((f) => [f[0], { uid: Number(f[2]), gid: Number(f[3]), name: f[0] ?? '' }] as const),
  );
  const user = users.get('postgres') ?? users.get('nobody');
  if (user === undefined) {
    throw new Error('running as root, but no postgres or nobody user exists to run initdb as');
  }
  return user;
}

/** argv that runs `binary args` as `user` (setpriv execs in place, keeping the pid). */
function asUser(
  user: { uid: number; gid: number } | undefined,
  binary: string,
  args: string[],
): [string, string[]] {
  if (user === undefined) return [binary, args];
  return [
    'setpriv',
    [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--', binary, ...args],
  ];
}

/** Starts a private Postgres and waits until it accepts a query. Throws without the binaries. */
export async function startPostgres(): Promise<PostgresHandle> {
  const bin = postgresBinDir();
  if (bin === undefined) throw new Error(NO_POSTGRES_LINE);
  const user = unprivileged();
  const dir = mkdtempSync(join(tmpdir(), 'pb-postgres-'));
  if (user !== undefined) chownSync(dir, user.uid, user.gid);
  const data = join(dir, 'data');
  const [initCmd, initArgs] = asUser(user, join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'phasebridge',
    '--auth=trust',
    '-E',
    'UTF8',
    '--no-locale',
    '--no-sync',
  ]);
  try {
    execFileSync(initCmd, initArgs, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = String((err as { stderr?: unknown }).stderr ?? '').trim();
    throw new Error(`initdb failed${stderr === '' ? '' : `: ${stderr}`}`, { cause: err });
  }
  const port = await freePort();
  // fsync off: a test database need not survive a power cut, and the machine is shared.
  const [cmd, args] = asUser(user, join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    String(port),
    '-h',
    '127.0.0.1',
    '-k',
    dir,
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
  ]);
  const child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
  const pid = child.pid;
  if (pid === undefined) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start ${cmd}`);
  }
  // The server's log, last few kB: why it stopped, when it does.
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-4000);
  });
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const killOnExit = () => kill(pid, 'SIGKILL');
  process.once('exit', killOnExit);
  const url = `postgres://phasebridge@127.0.0.1:${port}/postgres`;
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`postgres on port ${port} exited while starting:\n${log}`);
        return canQuery(url);
      },
      15_000,
      `postgres on port ${port} did not accept a connection:\n${log}`,
    );
  } catch (err) {
    process.off('exit', killOnExit);
    killOnExit();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    dir,
    async createDatabase(template?: string) {
      const name = `pb_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const from = template === undefined ? '' : ` template ${client.escapeIdentifier(template)}`;
        await client.query(`create database ${name}${from}`);
      } finally {
        await client.end();
      }
      return `postgres://phasebridge@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      process.off('exit', killOnExit);
      // SIGINT is Postgres's fast shutdown: it ends the sessions and exits.
      kill(pid, 'SIGINT');
      await waitFor(async () => exited, 10_000, `postgres ${pid} did not stop`).catch(() =>
        kill(pid, 'SIGKILL'),
      );
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** True when a query on `url` succeeds. */
async function canQuery(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
