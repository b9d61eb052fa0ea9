/**
 * For an explicit repair: finds the CodeMachine layout's files that cannot be read at all (a
 * registry.db that is not a database, an unparseable template.json) and moves each aside as
 * `<file>.corrupt-<stamp>`, so the rebuild that follows writes them afresh. The rows of older
 * runs in a garbled registry.db are lost with it (the backup keeps the bytes).
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { CorruptStateError } from '../../../errors.ts';
import { nativeBindingOption } from '../../../sqlite-addon.ts';
import { fsyncDir, lstatNoSymlink } from '../../ledger/atomic-write.ts';
import type { SalvagedFile } from '../port.ts';
import { codemachinePaths } from './paths.ts';
import { readTemplateAt } from './template-file.ts';

/** The layout's unreadable files in `workspace`; moved aside when `stamp` is given. */
export function salvageCodemachine(workspace: string, stamp: string | null): SalvagedFile[] {
  const paths = codemachinePaths(workspace);
  const shown = (file: string) => path.relative(workspace, file);
  const out: SalvagedFile[] = [];
  const db = registryProblem(paths.registryDb);
  if (db !== null) {
    const problem = `${shown(paths.registryDb)} cannot be read (${db}); it is rebuilt from the ledger`;
    // The -wal and -shm files belong to the bad database: they go with it.
    const moved = stamp === null ? [] : moveAside([paths.registryDb, '-wal', '-shm'], stamp);
    out.push(moved[0] === undefined ? { problem } : { problem, backup: moved[0] });
  }
  const template = readTemplateAt(paths.template);
  if (template.kind === 'unparseable') {
    const problem = `${shown(paths.template)} is not a template (${template.error}); it is rewritten from the ledger`;
    const moved = stamp === null ? [] : moveAside([paths.template], stamp);
    out.push(moved[0] === undefined ? { problem } : { problem, backup: moved[0] });
  }
  return out;
}

/** Why registry.db cannot be used, or null when it is fine or missing. */
function registryProblem(file: string): string | null {
  const st = lstatNoSymlink(file);
  if (st === null) return null;
  if (!st.isFile()) return 'not a file';
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true, ...nativeBindingOption() });
    const check = db.pragma('quick_check', { simple: true });
    return check === 'ok' ? null : String(check);
  } catch (err) {
    return (err as Error).message;
  } finally {
    db?.close();
  }
}

/** Renames `[file, ...suffixes of file]` that exist to `<name>.corrupt-<stamp>`; the new paths. */
function moveAside([file, ...suffixes]: string[], stamp: string): string[] {
  const moved: string[] = [];
  for (const f of [file!, ...suffixes.map((s) => `${file}${s}`)]) {
    if (lstatNoSymlink(f) === null) continue;
    const to = `${f}.corrupt-${stamp}`;
    if (lstatNoSymlink(to) !== null) throw new CorruptStateError(`${to} already exists`);
    fs.renameSync(f, to);
    moved.push(to);
  }
  if (moved.length > 0) fsyncDir(path.dirname(file!));
  return moved;
}
