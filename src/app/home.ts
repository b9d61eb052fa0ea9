/**
 * PHASEBRIDGE_HOME holds bridge.db (allowlists, bindings, pairing codes): it is created 0700, and
 * an existing one open to other users is tightened to 0700 with a warning.
 */
import fs from 'node:fs';
import { ResourceError } from '../errors.ts';
import { makeDirs, systemError } from '../fs-errors.ts';

/** Where the warning goes; a pino logger fits. */
export interface HomeLogger {
  warn(obj: object, msg: string): void;
}

/** Creates or checks the home folder; ResourceError (one line, with the fix) when unusable. */
export function prepareHome(home: string, log: HomeLogger): void {
  let st: fs.Stats;
  try {
    st = fs.statSync(home);
  } catch (err) {
    const code = systemError(err)?.code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw notAccessible(home, err);
    makeDirs(home, 0o700);
    // mkdir's mode passes through the umask; say it exactly.
    fs.chmodSync(home, 0o700);
    return;
  }
  if (!st.isDirectory()) {
    throw new ResourceError(
      `PHASEBRIDGE_HOME ${home} is a file, not a folder: set PHASEBRIDGE_HOME to a folder (default ./.phasebridge) or move the file aside`,
    );
  }
  try {
    fs.accessSync(home, fs.constants.R_OK | fs.constants.W_OK | fs.constants.X_OK);
  } catch (err) {
    throw notAccessible(home, err);
  }
  const mode = st.mode & 0o777;
  if ((mode & 0o077) === 0) return;
  const was = `0${mode.toString(8)}`;
  try {
    fs.chmodSync(home, 0o700);
  } catch (err) {
    // Not ours to change (another owner): say so, but the bridge can still run.
    log.warn(
      { home, mode: was, code: systemError(err)?.code },
      'PHASEBRIDGE_HOME is open to other users and could not be tightened: chmod 700 it',
    );
    return;
  }
  log.warn(
    { home, mode: was },
    `PHASEBRIDGE_HOME was ${was} (open to other users): tightened to 0700, since it holds bridge.db`,
  );
}

function notAccessible(home: string, err: unknown): ResourceError {
  const code = systemError(err)?.code ?? 'error';
  return new ResourceError(
    `PHASEBRIDGE_HOME ${home} is not accessible (${code}): let the user running phasebridge read and write it (chown/chmod), or set PHASEBRIDGE_HOME to another folder`,
    { cause: err },
  );
}
