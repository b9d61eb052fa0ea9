/**
 * The fast path of `phasebridge status` and `phasebridge runs`, with no arguments: the runs table,
 * read from bridge.db with better-sqlite3 alone. scripts/bundle.mjs builds it into a bundle of its
 * own (dist/fast-status.cjs, without commander, Kysely, zod or pino), which bin/phasebridge.js
 * tries before the main bundle: reading and deserialising that bundle was most of the command's
 * start (issue 31).
 *
 * It answers only when the full command (src/cli/commands/status.ts) would print the runs table
 * from the same database unchanged; whenever it cannot be sure of that it prints nothing and says
 * so, and the bin runs the full command. It steps aside for: any other argument; a config file;
 * any setting in the environment but PHASEBRIDGE_HOME, PHASEBRIDGE_WORKSPACE and a valid
 * LOG_LEVEL (validation and DATABASE_URL are the config's); a home or bridge.db that the full
 * command would create, tighten or refuse; a database not in WAL mode or whose migrations are not
 * exactly this build's (it would be migrated or refused); and any error at all.
 */
import { accessSync, constants, existsSync, type Stats, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { CONFIG_ENV_NAMES, LOG_LEVELS } from '../config-names.ts';
import { appliedMigrations, schemaVersion, upToDate } from '../db/migration-check.ts';
import { toRunIndexRecord } from '../db/repositories/runs-record.ts';
import type { Row } from '../db/schema.ts';
import { nativeBindingOption } from '../sqlite-addon.ts';
import { renderRunsTable } from './render/status-table.ts';

/**
 * The migration names under migrations/ when the bundle was built (scripts/bundle.mjs defines it):
 * read from the folder, since importing migrations/index.ts would bring Kysely in.
 */
declare const PHASEBRIDGE_BUILT_MIGRATIONS: readonly string[] | undefined;

/** The commands answered here, each only with no argument or option at all. */
const FAST_COMMANDS: readonly string[] = ['status', 'runs'];

/** Settings that change nothing `status` does and whose every non-empty value is valid. */
const HARMLESS_SETTINGS: readonly string[] = ['PHASEBRIDGE_HOME', 'PHASEBRIDGE_WORKSPACE'];

/** The runs table's query, as RunsRepo.list builds it with its default `--limit` (20). */
const RUNS_TABLE_SQL = 'select * from runs order by updated_at desc, id desc limit 20';

/** Where the fast path looks: the environment and folder of the command. */
export interface FastStatusInput {
  /** The command's arguments, without node and the script. */
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** The migrations this build applies (default: those named when the bundle was built). */
  migrations?: readonly string[];
}

/**
 * The lines `phasebridge status` / `runs` would print for `input`, or null when the full command
 * must answer (see the file comment). Prints nothing and writes nothing to bridge.db.
 */
export function fastStatusLines(input: FastStatusInput): string[] | null {
  try {
    const migrations =
      input.migrations ??
      (typeof PHASEBRIDGE_BUILT_MIGRATIONS === 'undefined' ? [] : PHASEBRIDGE_BUILT_MIGRATIONS);
    if (migrations.length === 0) return null;
    if (input.args.length !== 1 || !FAST_COMMANDS.includes(input.args[0]!)) return null;
    const home = plainHome(input.env, input.cwd);
    if (home === null) return null;
    const file = join(home, 'bridge.db');
    if (!readyFile(file)) return null;
    return readRunsTable(file, migrations);
  } catch {
    return null;
  }
}

/**
 * The home the config would name (src/config.ts: PHASEBRIDGE_HOME, default ./.phasebridge, from
 * cwd) when nothing but the harmless settings are set and there is no config file; else null.
 */
function plainHome(env: NodeJS.ProcessEnv, cwd: string): string | null {
  // `??` in loadConfig: even an empty PHASEBRIDGE_CONFIG names a file (cwd itself).
  if (env.PHASEBRIDGE_CONFIG !== undefined) return null;
  for (const name of CONFIG_ENV_NAMES) {
    const value = env[name];
    // The config reads an empty value as unset.
    if (value === undefined || value === '' || HARMLESS_SETTINGS.includes(name)) continue;
    if (name === 'LOG_LEVEL' && (LOG_LEVELS as readonly string[]).includes(value)) continue;
    return null;
  }
  if (existsSync(resolve(cwd, 'phasebridge.config.yaml'))) return null;
  const home = resolve(cwd, env.PHASEBRIDGE_HOME || './.phasebridge');
  // CliContext.home() creates a missing home and tightens one open to others (with a warning).
  const st = statSync(home, { throwIfNoEntry: false });
  if (!st?.isDirectory() || looseMode(st)) return null;
  accessSync(home, constants.R_OK | constants.W_OK | constants.X_OK);
  return home;
}

/**
 * Whether bridge.db is there as openBridgeDb leaves it: a file it can open for writing, it and
 * its -wal/-shm sidecars closed to others (openBridgeDb would create or tighten them).
 */
function readyFile(file: string): boolean {
  const st = statSync(file, { throwIfNoEntry: false });
  if (!st?.isFile() || looseMode(st)) return false;
  accessSync(file, constants.R_OK | constants.W_OK);
  for (const sidecar of [`${file}-wal`, `${file}-shm`]) {
    const side = statSync(sidecar, { throwIfNoEntry: false });
    if (side !== undefined && looseMode(side)) return false;
  }
  return true;
}

/** Open to the group or others: the full command would chmod it. */
function looseMode(st: Stats): boolean {
  return (st.mode & 0o077) !== 0;
}

/** The runs table from `file`, or null when the full command would migrate or refuse it. */
function readRunsTable(file: string, migrations: readonly string[]): string[] | null {
  const sqlite = new Database(file, {
    ...nativeBindingOption(),
    readonly: true,
    fileMustExist: true,
  });
  try {
    // openBridgeDb switches a database to WAL: one that is not yet would be changed.
    if (sqlite.pragma('journal_mode', { simple: true }) !== 'wal') return null;
    if (schemaVersion(sqlite) > migrations.length) return null;
    if (!upToDate(appliedMigrations(sqlite), migrations)) return null;
    const rows = sqlite.prepare(RUNS_TABLE_SQL).all() as Row<'runs'>[];
    return renderRunsTable(rows.map(toRunIndexRecord));
  } finally {
    sqlite.close();
  }
}

/**
 * bin/phasebridge.js's entry: prints the runs table for `argv` (node, script, args…) and returns
 * true, or returns false having printed nothing (the bin then runs the full command).
 */
export function runFastStatus(argv: readonly string[]): boolean {
  let cwd: string;
  try {
    cwd = process.cwd();
  } catch {
    return false; // a folder removed under the shell: the full command says so
  }
  const lines = fastStatusLines({ args: argv.slice(2), env: process.env, cwd });
  if (lines === null) return false;
  // As src/cli/main.ts: `phasebridge status | head` closing stdout early is not an error.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  // One write of what console.log would write line by line.
  process.stdout.write(lines.map((line) => `${line}\n`).join(''));
  return true;
}
