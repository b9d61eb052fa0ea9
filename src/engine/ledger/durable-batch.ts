/**
 * One commit's durable writes to a layout's files, in two halves, so that the fsyncs of a
 * projection overlap the ledger's instead of following it one by one:
 *
 * - staging (before the ledger line is written): each replaced file is written to a temp file
 *   beside it, its fsync started on the thread pool a turn later, with the line's (`writeFile`); appends are only recorded
 *   (`append`): an appended line cannot be taken back, so it waits for the ledger.
 * - `publish()` (once the ledger line is durable): the `onPublish` steps run (e.g. codemachine's
 *   registry rows are written), the temp files are renamed into place, the appends are written,
 *   and then every folder that got a rename and every appended file are fsynced together: one
 *   wait for the disk, however many files the layout has.
 *
 * Only the fsyncs go to the thread pool; the opens, writes and renames are short calls made on
 * the calling thread (as the layouts made them before), so a commit makes few thread-pool round
 * trips: on a busy machine each one waits for a core.
 *
 * A batch made with `durable: false` (a commit's projection, issue 31) makes the same moves in
 * the same order without any fsync: the temp files are written, renamed and appended, and the
 * files and folders it touched are listed by `touched()` for the store to fsync later (when the
 * run is released), a marker in the run folder telling a reopen to re-project them meanwhile.
 *
 * `discard()` (the append failed, or staging did) removes the temp files and runs the
 * `onSettle` steps with `false`: nothing reached the layout's files, so a projection is never
 * ahead of the ledger. Without a ledger in between (a retry, a rebuild), a projection stages and
 * publishes at once.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncAsync, fsyncDirFast, type StagedWrite, stageFileAtomicFast } from './atomic-write.ts';
import { lstatNoSymlink, openInside, STATE_FILE_MODE } from './safe-path.ts';

/** Where a batched file may be written: `root` is trusted, everything below it is checked. */
export interface BatchWriteOptions {
  /** A trusted ancestor folder (no folder between it and the file may be a symlink). */
  root: string;
  /** Create missing folders (0700) below `root` while staging (default false). */
  mkdirs?: boolean;
  /** File mode (default 0600). */
  mode?: number;
}

/** A file staged in a batch. */
export interface StagedFile {
  /** Leaves the target alone at publish (the temp file is removed); for a publish step that writes it itself. */
  cancel(): void;
}

interface PendingWrite {
  staged: Promise<StagedWrite>;
  cancelled: boolean;
}

interface PendingAppend {
  file: string;
  text: string;
  root: string;
  mode: number;
}

/** What a batch put in place: files written and folders whose entries changed. */
export interface Touched {
  files: string[];
  dirs: string[];
}

/** The durable writes of one layout's projection of one commit. */
export class DurableBatch {
  #durable: boolean;
  readonly #touched: Touched = { files: [], dirs: [] };
  readonly #writes: PendingWrite[] = [];
  readonly #appends: PendingAppend[] = [];
  readonly #onPublish: (() => void)[] = [];
  readonly #onSettle: ((published: boolean) => void)[] = [];
  #settled = false;

  /** `durable: false`: no fsync; {@link DurableBatch.touched} lists what to fsync later. */
  constructor(opts: { durable?: boolean } = {}) {
    this.#durable = opts.durable ?? true;
  }

  /**
   * Makes this batch durable on publish after all (call before any write): for a projection
   * whose settle step depends on its files being on disk (coordinator's archive at completion).
   */
  requireDurable(): void {
    if (this.#writes.length > 0 || this.#appends.length > 0) {
      throw new Error('requireDurable() must come before the batch has writes');
    }
    this.#durable = true;
  }

  /** True when publish makes every write durable (fsynced) before it resolves. */
  get durable(): boolean {
    return this.#durable;
  }

  /** What publish put in place (also after a publish that failed part-way). */
  touched(): Touched {
    return { files: [...this.#touched.files], dirs: [...this.#touched.dirs] };
  }

  /** Stages `data` as the next content of `file` (temp file written and fsynced now). */
  writeFile(file: string, data: string | Uint8Array, opts: BatchWriteOptions): StagedFile {
    const staged = stageFileAtomicFast(file, data, {
      root: opts.root,
      mkdirs: opts.mkdirs ?? false,
      mode: opts.mode ?? STATE_FILE_MODE,
      durable: this.#durable,
    });
    staged.catch(() => undefined); // awaited by publish or discard
    const write: PendingWrite = { staged, cancelled: false };
    this.#writes.push(write);
    return {
      cancel: () => {
        write.cancelled = true;
      },
    };
  }

  /** Records `text` to append to `file` (created when missing) once the ledger is durable. */
  append(file: string, text: string, opts: Omit<BatchWriteOptions, 'mkdirs'>): void {
    if (text === '') return;
    this.#appends.push({ file, text, root: opts.root, mode: opts.mode ?? STATE_FILE_MODE });
  }

  /** Runs `fn` when publishing, before any file moves (after the ledger line is durable). */
  onPublish(fn: () => void): void {
    this.#onPublish.push(fn);
  }

  /** Runs `fn` once, after a publish (`true`: every write is durable) or a discard (`false`). */
  onSettle(fn: (published: boolean) => void): void {
    this.#onSettle.push(fn);
  }

  /** Puts every staged write in place and makes it durable; on failure discards the rest. */
  async publish(): Promise<void> {
    let published = false;
    try {
      await Promise.all(this.#writes.map((w) => w.staged));
      for (const fn of this.#onPublish) fn();
      const live = this.#writes.filter((w) => !w.cancelled);
      const staged = await Promise.all(live.map((w) => w.staged));
      await Promise.all(
        this.#writes.filter((w) => w.cancelled).map((w) => w.staged.then((s) => s.discard())),
      );
      const dirs = new Set(staged.map((s) => s.dir));
      for (const s of staged) this.#touched.files.push(s.file);
      this.#touched.dirs.push(...dirs);
      await Promise.all(staged.map((s) => s.rename()));
      const syncs: Promise<void>[] = [];
      for (const a of this.#appends) {
        this.#touched.files.push(path.resolve(a.file));
        syncs.push(appendNow(a, dirs, this.#durable, this.#touched));
      }
      if (this.#durable) for (const dir of dirs) syncs.push(fsyncDirFast(dir));
      await settleAll(syncs);
      published = true;
    } catch (err) {
      await this.#removeTemps();
      throw err;
    } finally {
      this.#settle(published);
    }
  }

  /** Removes every staged temp file; the layout's files stay as they were. */
  async discard(): Promise<void> {
    await this.#removeTemps();
    this.#settle(false);
  }

  async #removeTemps(): Promise<void> {
    await Promise.all(
      this.#writes.map((w) =>
        w.staged.then(
          (s) => s.discard(),
          () => undefined,
        ),
      ),
    );
  }

  /** Runs every settle step (a lock release must not be skipped), then throws the first error. */
  #settle(published: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    let first: { err: unknown } | null = null;
    for (const fn of this.#onSettle) {
      try {
        fn(published);
      } catch (err) {
        first ??= { err };
      }
    }
    if (first) throw first.err;
  }
}

/**
 * Appends in one write and fsyncs on the thread pool (unless `durable` is false); a file created
 * here adds its folder to `dirs` (its entry must be durable too) or to `touched`.
 */
async function appendNow(
  a: PendingAppend,
  dirs: Set<string>,
  durable: boolean,
  touched: Touched,
): Promise<void> {
  const created = lstatNoSymlink(a.file) === null;
  const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;
  const fd = openInside(a.root, a.file, O_WRONLY | O_APPEND | O_CREAT, a.mode);
  try {
    fs.writeSync(fd, a.text);
    const dir = path.dirname(path.resolve(a.file));
    if (!durable) {
      if (created) touched.dirs.push(dir);
      return;
    }
    // The folder is fsynced by the caller when a rename happened there; otherwise here.
    await Promise.all([fsyncAsync(fd), created && !dirs.has(dir) ? fsyncDirFast(dir) : null]);
  } finally {
    fs.closeSync(fd);
  }
}

/** Waits for every promise, then throws the first failure (no fsync is left running unseen). */
async function settleAll(all: Promise<unknown>[]): Promise<void> {
  const results = await Promise.allSettled(all);
  const failed = results.find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}
