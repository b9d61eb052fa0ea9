/**
 * The two answers bin/phasebridge.js gives without the main bundle (scripts/bundle.mjs builds
 * them with it, into dist/; issue 31): reading and deserialising the main bundle and its code cache
 * was most of a short command's start.
 *
 * - dist/fast-status.cjs (src/cli/fast-status.ts): a plain `status` or `runs`, the runs table read
 *   with better-sqlite3 alone. It steps aside (the bin then runs the main bundle) whenever the full
 *   command could answer otherwise; one thing it checks is that bridge.db holds exactly the
 *   migrations under migrations/, whose names are written into it here.
 * - dist/help.txt: what the main bundle prints for `phasebridge --help` to a pipe or a file, printed
 *   by the bin for `--help`/`-h` alone when its stdout is not a terminal (commander wraps the help
 *   to a terminal's width, to 80 columns anywhere else).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import path from 'node:path';

/**
 * The names of the migrations under `root`/migrations (`NNNN_what.ts` → `NNNN_what`), sorted:
 * migrations/index.ts registers each file, and importing it would bring in Kysely.
 */
export function migrationNames(root) {
  return readdirSync(path.join(root, 'migrations'))
    .filter((name) => /^\d{4}_\w+\.ts$/.test(name))
    .map((name) => name.slice(0, -'.ts'.length))
    .sort();
}

/**
 * esbuild options of dist/fast-status.cjs, on top of the main bundle's `common` ones: a plain
 * CommonJS module under a fixed name, required by the bin as it is (~33 kB compile in less time
 * than a code cache takes to read). `plugin` resolves the libraries as for the main bundle; none
 * of its large ones is imported (Kysely, commander, zod, pino).
 */
export function fastStatusOptions(root, outdir, common, plugin) {
  return {
    ...common,
    absWorkingDir: root,
    entryPoints: { 'fast-status': 'src/cli/fast-status.ts' },
    entryNames: '[name]',
    outdir,
    define: {
      ...common.define,
      PHASEBRIDGE_BUILT_MIGRATIONS: JSON.stringify(migrationNames(root)),
    },
    plugins: [plugin],
    // dist/fast-status.meta.json: what a plain `status` loads (bench/cli-start.ts reports it).
    metafile: true,
  };
}

/**
 * Writes `help` (dist/help.txt): what `phasebridge --help` prints to a pipe, from the launcher
 * just written, in a bare environment (the help reads no setting). Removed instead when that
 * fails, so that the bin never prints the help of an older build: it then runs the main bundle.
 * The call also leaves the `help` code cache of the new bundle behind, as any first call would.
 */
export function writeHelpText(launcher, help, write) {
  const res = spawnSync(process.execPath, [launcher, '--help'], {
    cwd: path.dirname(launcher),
    env: { PATH: process.env.PATH },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (res.status === 0 && res.stderr === '' && res.stdout.startsWith('Usage: phasebridge ')) {
    write(help, res.stdout);
    return true;
  }
  rmSync(help, { force: true });
  return false;
}
