/**
 * The layouts' marker (issue 31): a commit writes the other layouts' files (codemachine,
 * codexclaw, flow, coordinator) in place without fsyncing them, so that it waits for the disk
 * only as the raw I/O does (the ledger line, run.json). Before the first such write, an empty
 * file `layouts-since-<seq>` is made durable in the run folder: the layouts' files were last
 * durable at ledger seq `<seq>`. Releasing the run fsyncs every file the layouts touched and
 * removes the marker. A run opened with a marker (the process or the machine stopped before the
 * release) has its layouts re-projected from `<seq>` with the ledger's later events: the ledger
 * is the truth, the layouts' files are derived from it and written idempotently.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fsyncAsync } from '../ledger/atomic-write.ts';

const MARKER = /^layouts-since-(\d{1,15})$/;

/** The marker's file name for `seq`. */
export function layoutMarkerName(seq: number): string {
  return `layouts-since-${seq}`;
}

/** True when `name` is a layouts' marker (never-started.ts counts it as ours). */
export function isLayoutMarker(name: string): boolean {
  return MARKER.test(name);
}

/** The lowest seq of the markers in `runDir` (several: an earlier removal did not last), or null. */
export function readLayoutMarker(runDir: string): number | null {
  let names: string[];
  try {
    names = fs.readdirSync(runDir);
  } catch {
    return null;
  }
  let low: number | null = null;
  for (const name of names) {
    const m = MARKER.exec(name);
    if (m === null) continue;
    const seq = Number(m[1]);
    if (low === null || seq < low) low = seq;
  }
  return low;
}

/** Creates the marker for `seq` (not durable: the caller fsyncs `runDir`). */
export function createLayoutMarker(runDir: string, seq: number): void {
  const { O_WRONLY, O_CREAT, O_NOFOLLOW } = fs.constants;
  fs.closeSync(
    fs.openSync(path.join(runDir, layoutMarkerName(seq)), O_WRONLY | O_CREAT | O_NOFOLLOW, 0o600),
  );
}

/** Removes every marker in `runDir` (a removal lost in a crash costs only a re-projection). */
export function removeLayoutMarkers(runDir: string): void {
  for (const name of fs.readdirSync(runDir)) {
    if (MARKER.test(name)) fs.rmSync(path.join(runDir, name), { force: true });
  }
}

/**
 * One open run's layouts' durability: the marker (created once until the next flush) and what
 * the layouts wrote since, fsynced by {@link LayoutDurability.flush}. Used under the run's mutex.
 */
export class LayoutDurability {
  readonly #runDir: string;
  readonly #dirFd: () => number | null;
  /** The seq the layouts' files were last durable at (the marker names it). */
  #durableSeq = 0;
  /** The marker, once created (resolves when durable); null: none in the folder. */
  #marker: Promise<void> | null = null;
  readonly #files = new Set<string>();
  readonly #dirs = new Set<string>();

  /** `dirFd`: the run folder kept open by the run (null: opened per fsync). */
  constructor(runDir: string, dirFd: () => number | null) {
    this.#runDir = runDir;
    this.#dirFd = dirFd;
  }

  /**
   * After a load: the layouts are durable at `seq`; `found` is the marker found in the folder
   * (kept, and fsynced again, until the re-projection that follows is flushed).
   */
  reset(seq: number, found: number | null): void {
    this.#durableSeq = found === null ? seq : Math.min(seq, found);
    this.#marker = null;
    this.#files.clear();
    this.#dirs.clear();
    if (found !== null) this.#watch(this.#fsyncDir());
  }

  /**
   * Creates the marker (once until the next flush) and makes it durable: from then on the
   * layouts' files may be written without fsync. A failure is retried by the next call.
   */
  ensure(): Promise<void> {
    if (this.#marker === null) {
      this.#watch(
        (async () => {
          createLayoutMarker(this.#runDir, this.#durableSeq);
          await this.#fsyncDir();
        })(),
      );
    }
    return this.#marker!;
  }

  /** Records what a layout's batch put in place (fsynced by the next flush). */
  track(t: { files: readonly string[]; dirs: readonly string[] }): void {
    for (const f of t.files) this.#files.add(f);
    for (const d of t.dirs) this.#dirs.add(d);
  }

  /**
   * Makes every file the layouts wrote since the marker durable, then removes the marker: the
   * layouts are durable at `seq`. A failure keeps the marker (a reopen re-projects) and throws.
   */
  async flush(seq: number): Promise<void> {
    if (this.#marker === null) return;
    await this.#marker;
    const files = [...this.#files];
    const dirs = [...this.#dirs];
    const { O_RDONLY, O_NOFOLLOW, O_DIRECTORY } = fs.constants;
    await Promise.all([
      ...files.map((f) => fsyncPath(f, O_RDONLY | O_NOFOLLOW)),
      ...dirs.map((d) => fsyncPath(d, O_RDONLY | O_NOFOLLOW | O_DIRECTORY)),
    ]);
    removeLayoutMarkers(this.#runDir);
    this.#marker = null;
    for (const f of files) this.#files.delete(f);
    for (const d of dirs) this.#dirs.delete(d);
    this.#durableSeq = seq;
  }

  #watch(marker: Promise<void>): void {
    this.#marker = marker;
    marker.catch(() => {
      if (this.#marker === marker) this.#marker = null;
    });
  }

  async #fsyncDir(): Promise<void> {
    const fd = this.#dirFd();
    if (fd !== null) return fsyncAsync(fd);
    return fsyncPath(this.#runDir, fs.constants.O_RDONLY | fs.constants.O_DIRECTORY);
  }
}

/** fsyncs what is at `file` now (opened with `flags`); one that is gone is skipped. */
async function fsyncPath(file: string, flags: number): Promise<void> {
  let fd: number;
  try {
    fd = fs.openSync(file, flags);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    await fsyncAsync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
