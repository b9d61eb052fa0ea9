/**
 * What this process last read or wrote at a layout file (flow's run.yaml and events.jsonl,
 * codexclaw's shared ledger.jsonl), keyed by path and tied to the file's identity then (device,
 * inode, size, mtime, ctime at ns resolution). A commit re-reads and re-parses a file only when
 * something else changed it since: the tools sharing these files write by temp file and rename
 * (a new inode), append (a new size) or write in place (a new mtime), so a match means the bytes
 * are the ones we know. Saves each commit a read and a parse per file.
 */
import fs from 'node:fs';

/** A file's content as this process knows it (what the caller derived from its bytes). */
export interface KnownFile<T> {
  value: T;
}

/** Entries kept; the oldest goes first (one run's files are a few kB). */
const MAX_KNOWN = 256;
const known = new Map<string, { id: string; file: KnownFile<unknown> }>();

/** A file's identity: its size and what changes with any write or rename over it. */
export interface FileIdentity {
  size: number;
  key: string;
}

/** The identity of `file` now (not following a final symlink), or null when it is no plain file. */
export function fileIdentity(file: string): FileIdentity | null {
  const st = fs.lstatSync(file, { bigint: true, throwIfNoEntry: false });
  if (st === undefined || !st.isFile() || st.nlink !== 1n) return null;
  return {
    size: Number(st.size),
    key: `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`,
  };
}

/** What is known of `file` when it is unchanged since it was remembered, else undefined. */
export function knownFile<T>(file: string): KnownFile<T> | undefined {
  const entry = known.get(file);
  if (entry === undefined) return undefined;
  if (fileIdentity(file)?.key === entry.id) return entry.file as KnownFile<T>;
  known.delete(file);
  return undefined;
}

/**
 * Remembers what `file` holds (`bytes` long): `before` is its identity taken before reading it
 * (a change while reading then shows as a mismatch later); without it, the identity now (right
 * after our own write). Nothing is remembered when the size differs (someone else wrote too).
 */
export function rememberFile<T>(
  file: string,
  bytes: number,
  value: T,
  before?: FileIdentity | null,
): void {
  known.delete(file);
  const id = before === undefined ? fileIdentity(file) : before;
  if (id === null || id.size !== bytes) return;
  known.set(file, { id: id.key, file: { value } });
  if (known.size > MAX_KNOWN) known.delete(known.keys().next().value as string);
}
