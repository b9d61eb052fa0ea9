/**
 * A private Postgres for tests, like test/support/redis.ts: `initdb` in a temp folder, `postgres`
 * on a free 127.0.0.1 port (socket in the same folder), waited for by polling a connect, stopped
 * by its pid, the folder removed. initdb refuses to run as root, so as root both run as the
 * `postgres` user (Debian's package creates it) or else `nobody`, through `setpriv`, which execs
 * in place: the pid we hold is the postmaster's own. Without the binaries, suites skip with
 * NO_POSTGRES_LINE (CI installs Debian `postgresql` in .ci/run). `sharedPostgres` gives the files of
 * one test process one server (initdb and a start cost ~2.5 s of CPU); `startPostgres` a server of
 * the caller's own, for tests that stop, kill or cut off theirs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
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
export function startPostgres(): Promise<PostgresHandle> {
  return launch(false);
}

/**
 * This process's shared Postgres (a vitest fork runs many files: one initdb and one server start
 * for them all, instead of one per file), started on first use. Each caller gets its own handle:
 * its `stop` drops the databases that handle created and leaves the server running; the server
 * ends, and its folder goes, when this process is gone, however it ended (a watchdog shell reads
 * our end of a pipe). For tests that only need a database; a test that stops, kills or cuts off
 * its server starts its own with `startPostgres`.
 */
export async function sharedPostgres(): Promise<PostgresHandle> {
  const holder = globalThis as { [SHARED]?: Promise<PostgresHandle> };
  // On globalThis: one server per process even if this module is evaluated again.
  holder[SHARED] ??= launch(true);
  const pending = holder[SHARED];
  const server = await pending.catch((err: unknown) => {
    if (holder[SHARED] === pending) delete holder[SHARED];
    throw err;
  });
  const mine: string[] = [];
  return {
    url: server.url,
    dir: server.dir,
    async createDatabase(template?: string) {
      const url = await server.createDatabase(template);
      mine.push(new URL(url).pathname.slice(1));
      return url;
    },
    async stop() {
      // Dropped rather than left: a fork runs hundreds of tests, each database ~8 MB on disk.
      await adminQuery(server.url, async (client) => {
        for (const name of mine.splice(0)) {
          await client.query(
            `drop database if exists ${client.escapeIdentifier(name)} with (force)`,
          );
        }
      });
    },
  };
}

const SHARED = Symbol.for('phasebridge.test.sharedPostgres');

/**
 * The watchdog of a shared server (argv: folder, then the server's command): ends the server
 * (SIGINT, Postgres's fast shutdown) when its stdin, our pipe, reaches EOF because we are gone,
 * and removes the folder once the server has exited, for whatever reason. A background job of
 * a non-interactive sh reads /dev/null, hence the pipe on fd 3; Ctrl-C reaches the server itself.
 */
const WATCHDOG = `dir=$1; shift
trap '' INT
exec 3<&0
"$@" </dev/null &
pg=$!
{ read -r _ <&3; kill -INT "$pg"; } 2>/dev/null &
reader=$!
exec 3<&-
wait "$pg"
kill "$reader" 2>/dev/null
rm -rf "$dir"`;

/** initdb and a server; `shared`: under the watchdog, for the life of this process. */
async function launch(shared: boolean): Promise<PostgresHandle> {
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
  const child = shared
    ? spawn('sh', ['-c', WATCHDOG, 'sh', dir, cmd, ...args], {
        stdio: ['pipe', 'ignore', 'pipe'],
        cwd: dir,
      })
    : spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: dir });
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
  // The watchdog needs no exit hook: our end of its pipe closes with us.
  if (!shared) process.once('exit', killOnExit);
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
    if (shared) child.stdin?.end();
    else {
      process.off('exit', killOnExit);
      killOnExit();
      rmSync(dir, { recursive: true, force: true });
    }
    throw err;
  }
  if (shared) {
    // Not to be waited for: the server lives as long as this process, files come and go.
    child.unref();
    for (const stream of [child.stdin, child.stderr]) (stream as Socket | null)?.unref();
  }
  return {
    url,
    dir,
    async createDatabase(template?: string) {
      const name = `pb_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
      await adminQuery(url, async (client) => {
        const from = template === undefined ? '' : ` template ${client.escapeIdentifier(template)}`;
        // Postgres 15+ copies through the WAL by default; a file copy costs about half the CPU.
        const version = Number(
          (await client.query('show server_version_num')).rows[0]?.server_version_num,
        );
        const strategy = version >= 150_000 ? ' strategy file_copy' : '';
        await client.query(`create database ${name}${from}${strategy}`);
      });
      return `postgres://phasebridge@127.0.0.1:${port}/${name}`;
    },
    async stop() {
      if (shared) throw new Error('a shared postgres ends with its process');
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

/** Runs `work` on a connection to the maintenance database `url`. */
async function adminQuery(url: string, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
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
