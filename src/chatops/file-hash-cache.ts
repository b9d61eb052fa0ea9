/**
 * sha256 of workspace files, cached by path and what lstat says (size, mtime, ctime, inode,
 * device), so a re-check hashes only files that changed. Workspace rules (docs/workflows.md): a
 * symlink is never followed (it hashes as its kind, its target unread), only regular files are
 * read, through openInside (no link on the way), and at most MAX_HASHED_BYTES of each. The names
 * in a directory are cached the same way, by the directory's lstat.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { openInside, readFdBounded, UnsafePathError } from '../engine/ledger/safe-path.ts';

/** Bytes of one file hashed at most; a larger file hashes as its size and times. */
export const MAX_HASHED_BYTES = 16 * 1024 * 1024;
/** Entries kept before the cache is emptied (a long-lived bridge follows many runs). */
const MAX_ENTRIES = 50_000;

interface Entry {
  stamp: string;
  hash: string;
}

/** Entries never hashed beside a step's files: version control, the bridge's and formats' state. */
function skipped(entry: fs.Dirent): boolean {
  if (entry.name === '.git') return true;
  return entry.isDirectory() && (entry.name.startsWith('.') || entry.name === 'node_modules');
}

/** One file's hash: `sha256:<hex>`, or what stands in for content that is not read. */
export type FileHash = string;

/** Hashes files inside a workspace, re-reading only those whose lstat changed. */
export class FileHashCache {
  readonly #entries = new Map<string, Entry>();
  readonly #dirs = new Map<string, { stamp: string; names: string[] }>();
  /** Files read (not served from the cache) since creation: the bench and tests look at it. */
  reads = 0;

  /** The last workspace asked for and its resolved root: a re-check asks thousands of times. */
  #root = { workspace: '', root: '' };

  #rootOf(workspace: string): string {
    if (this.#root.workspace !== workspace)
      this.#root = { workspace, root: path.resolve(workspace) };
    return this.#root.root;
  }

  /** The hash of `file` (workspace-relative or absolute inside `workspace`). */
  hash(workspace: string, file: string): FileHash {
    const root = this.#rootOf(workspace);
    const abs = path.resolve(root, file);
    // A listed path is data the agent could write: one outside the workspace is not even lstat'ed.
    // (resolve() removed every `..`, so a prefix test is exact; it is cheaper than relative().)
    if (!abs.startsWith(root + path.sep)) return 'refused (outside the workspace)';
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(abs, { throwIfNoEntry: false });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOTDIR' ? 'absent' : `unreadable:${code ?? 'error'}`;
    }
    if (st === undefined) return 'absent';
    if (st.isSymbolicLink()) return 'symlink (not followed)';
    if (!st.isFile()) return st.isDirectory() ? 'directory' : 'special file';
    // ctime too: any write or rename onto the path moves it, whatever mtime is set back to.
    const stamp = `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.dev}`;
    const known = this.#entries.get(abs);
    if (known?.stamp === stamp) return known.hash;
    const hash = this.#read(workspace, abs, st);
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    // Only content actually read is cached: a refused path is looked at again next time.
    if (hash.startsWith('sha256:')) this.#entries.set(abs, { stamp, hash });
    return hash;
  }

  /**
   * The names in a workspace directory (sorted; dot-directories, `node_modules` and `.git` left
   * out), re-read only when the directory's lstat changed: a file added or removed there moves
   * its mtime. A directory outside the workspace, reached through a link, or absent has none.
   */
  names(workspace: string, dir: string): readonly string[] {
    const root = this.#rootOf(workspace);
    const abs = path.resolve(root, dir);
    if (abs !== root && !abs.startsWith(root + path.sep)) return [];
    let st: fs.Stats | undefined;
    try {
      st = fs.lstatSync(abs, { throwIfNoEntry: false });
    } catch {
      return [];
    }
    if (st === undefined || !st.isDirectory()) return [];
    const stamp = `${st.mtimeMs}:${st.ctimeMs}:${st.ino}:${st.dev}`;
    const known = this.#dirs.get(abs);
    if (known?.stamp === stamp) return known.names;
    try {
      // No link on the way: the real path is the path asked for.
      if (fs.realpathSync(abs) !== path.join(fs.realpathSync(root), path.relative(root, abs))) {
        return [];
      }
      const names = fs
        .readdirSync(abs, { withFileTypes: true })
        .filter((e) => !skipped(e))
        .map((e) => e.name)
        .sort();
      if (this.#dirs.size >= MAX_ENTRIES) this.#dirs.clear();
      this.#dirs.set(abs, { stamp, names });
      return names;
    } catch {
      return [];
    }
  }

  #read(workspace: string, abs: string, st: fs.Stats): FileHash {
    if (st.size > MAX_HASHED_BYTES) return `large:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
    let fd: number | undefined;
    try {
      fd = openInside(workspace, abs, fs.constants.O_RDONLY);
      this.reads += 1;
      const bytes = readFdBounded(fd, MAX_HASHED_BYTES, abs);
      return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    } catch (err) {
      if (err instanceof UnsafePathError) return 'refused (a link or odd file on its way)';
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' ? 'absent' : `unreadable:${code ?? 'error'}`;
    } finally {
      if (fd !== undefined) fs.closeSync(fd);
    }
  }
}
