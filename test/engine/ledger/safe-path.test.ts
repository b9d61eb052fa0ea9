/**
 * The no-follow helper every workspace file goes through: what an agent can plant (a symlink at
 * the file or a folder, a hard link, a FIFO, a path out) is refused with the path named, and the
 * planted link's target is neither read nor written.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  confirmFdInside,
  openInside,
  prepareSqliteInside,
  readTextInside,
  resolveInside,
} from '../../../src/engine/ledger/safe-path.ts';

const { O_WRONLY, O_APPEND, O_CREAT, O_RDONLY } = fs.constants;
const APPEND = O_WRONLY | O_APPEND | O_CREAT;

let dir: string;
let ws: string;
let outside: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-safe-path-'));
  ws = path.join(dir, 'ws');
  fs.mkdirSync(ws);
  outside = path.join(dir, 'outside.txt');
  fs.writeFileSync(outside, 'secret\n');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function append(file: string, text: string): void {
  const fd = openInside(ws, file, APPEND);
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
}

describe('openInside / readTextInside', () => {
  it('creates missing folders 0700 and the file 0600, and tightens a loose existing file', () => {
    const old = process.umask(0o022);
    try {
      const file = path.join(ws, '.phasebridge', 'runs', 'r', 'logs', 'a.log');
      append(file, 'one\n');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      for (const d of ['.phasebridge', '.phasebridge/runs', '.phasebridge/runs/r/logs']) {
        expect(fs.statSync(path.join(ws, d)).mode & 0o777).toBe(0o700);
      }
      fs.chmodSync(file, 0o644);
      append(file, 'two\n');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(readTextInside(ws, file)).toBe('one\ntwo\n');
    } finally {
      process.umask(old);
    }
  });

  it('refuses a symlink at the file, for reading and writing, naming it', () => {
    const file = path.join(ws, 'logs', 'a.log');
    fs.mkdirSync(path.dirname(file));
    fs.symlinkSync(outside, file);
    const message = `refusing to follow the symlink ${file} planted in the workspace`;
    expect(() => append(file, 'pwned\n')).toThrow(message);
    expect(() => readTextInside(ws, file)).toThrow(message);
    expect(fs.readFileSync(outside, 'utf8')).toBe('secret\n');
  });

  it('refuses a symlinked folder on the way, also a relative one pointing inside', () => {
    fs.mkdirSync(path.join(ws, 'real'));
    fs.symlinkSync('real', path.join(ws, 'logs'));
    expect(() => append(path.join(ws, 'logs', 'a.log'), 'x')).toThrow(
      `refusing to follow the symlink ${path.join(ws, 'logs')} planted in the workspace`,
    );
    expect(fs.readdirSync(path.join(ws, 'real'))).toEqual([]);
  });

  it('refuses a hard link (it would write into the linked file) and a FIFO, without hanging', () => {
    const hard = path.join(ws, 'hard.log');
    fs.linkSync(outside, hard);
    expect(() => append(hard, 'pwned\n')).toThrow(`refusing ${hard}: it has 2 hard links`);
    expect(fs.readFileSync(outside, 'utf8')).toBe('secret\n');
    const fifo = path.join(ws, 'fifo.log');
    execFileSync('mkfifo', [fifo]);
    expect(() => readTextInside(ws, fifo)).toThrow(`refusing ${fifo}: it is not a regular file`);
  });

  it('reads a missing file or folder as null, and refuses paths leaving the root', () => {
    expect(readTextInside(ws, path.join(ws, 'no', 'such.log'))).toBeNull();
    expect(() => resolveInside(ws, '../outside.txt')).toThrow(`refusing ${outside}: it is outside`);
    expect(() => readTextInside(ws, outside)).toThrow('is outside');
  });

  // /proc/self/fd is Linux's; elsewhere the lstat walk is the only check.
  it.skipIf(process.platform !== 'linux')(
    'confirmFdInside catches a file reached through a folder swapped for a link',
    () => {
      // What a swap between the folder checks and the open would give: an fd outside the root.
      fs.symlinkSync(dir, path.join(ws, 'swapped'));
      const fd = fs.openSync(path.join(ws, 'swapped', 'outside.txt'), O_RDONLY);
      try {
        const shown = path.join(ws, 'swapped', 'outside.txt');
        expect(() => confirmFdInside(fd, ws, shown)).toThrow(
          `refusing ${shown}: it leads outside the workspace`,
        );
      } finally {
        fs.closeSync(fd);
      }
    },
  );
});

describe('prepareSqliteInside', () => {
  it('creates a missing database 0600 and refuses a planted -wal link', () => {
    const db = path.join(ws, '.codemachine', 'logs', 'registry.db');
    expect(prepareSqliteInside(ws, db)).toBe(db);
    expect(fs.statSync(db).mode & 0o777).toBe(0o600);
    fs.symlinkSync(outside, `${db}-wal`);
    expect(() => prepareSqliteInside(ws, db)).toThrow(
      `refusing to follow the symlink ${db}-wal planted in the workspace`,
    );
  });
});
