/**
 * Archives the folder of a finished run, `<workspace>/.phasebridge/runs/<id>/`, into
 * `<id>.tar.gz` beside it (`.tar.zst` when this Node has zstd), with `<archive>.sha256` in the
 * format `sha256sum -c` reads. The archive is read back and compared entry by entry with what
 * was written before anything is removed. Nothing outside the run folder is read: every folder
 * on the way is checked not to be a symlink, every file is opened with O_NOFOLLOW and confirmed
 * inside it, and a symlink in the folder is stored as a link, never followed.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { nativeRunDir, runsDir } from '../engine/layouts/native.ts';
import { fsyncDir } from '../engine/ledger/atomic-write.ts';
import {
  confirmFdInside,
  ensureRealDir,
  lstatNoSymlink,
  UnsafePathError,
} from '../engine/ledger/safe-path.ts';
import { assertRunId } from '../engine/store/run-id.ts';
import { CorruptStateError } from '../errors.ts';
import { padding, readTar, TAR_END, type TarEntry, tarHeader } from './tar.ts';

const { O_RDONLY, O_NOFOLLOW, O_WRONLY, O_CREAT, O_EXCL } = fs.constants;
const CHUNK = 256 * 1024;

/** zstd when this Node's zlib has it (Node ≥ 22.15), else gzip. */
type Codec = {
  ext: 'tar.zst' | 'tar.gz';
  compress(): NodeJS.ReadWriteStream;
  decompress(b: Buffer): Buffer;
};
const z = zlib as unknown as Record<string, unknown>;
const CODECS: Codec[] = [
  ...(typeof z.createZstdCompress === 'function'
    ? [
        {
          ext: 'tar.zst' as const,
          compress: () => (z.createZstdCompress as () => NodeJS.ReadWriteStream)(),
          decompress: (b: Buffer) => (z.zstdDecompressSync as (b: Buffer) => Buffer)(b),
        },
      ]
    : []),
  {
    ext: 'tar.gz' as const,
    compress: () => zlib.createGzip({ level: 6 }),
    decompress: (b: Buffer) => zlib.gunzipSync(b),
  },
];

/** What archiving one run did. */
export interface ArchivedRun {
  runId: string;
  archive: string;
  checksumFile: string;
  /** Entries stored (folders, files, links). */
  entries: number;
  /** Bytes of file content stored (before compression). */
  bytes: number;
}

/** The archive of a run (existing or not), by the formats this Node reads, preferred first. */
export function archivePathsOf(workspace: string, runId: string): string[] {
  assertRunId(runId);
  return CODECS.map((c) => path.join(runsDir(workspace), `${runId}.${c.ext}`));
}

/** The existing archive of a run, or null. */
export function findArchive(workspace: string, runId: string): string | null {
  return archivePathsOf(workspace, runId).find((p) => lstatNoSymlink(p)?.isFile()) ?? null;
}

/**
 * Packs the run's folder into an archive beside it and checks it (read back, every entry
 * compared); the folder is left in place: {@link removeRunFolder} removes it once the caller
 * has recorded the archive.
 */
export async function archiveRunFolder(workspace: string, runId: string): Promise<ArchivedRun> {
  assertRunId(runId);
  const root = path.resolve(workspace);
  const dir = nativeRunDir(root, runId);
  if (lstatNoSymlink(dir) === null) throw new CorruptStateError(`run folder ${dir} is missing`);
  ensureRealDir(dir, { root });
  const codec = CODECS[0]!;
  const archive = path.join(runsDir(root), `${runId}.${codec.ext}`);
  const tmp = path.join(runsDir(root), `.${runId}.${codec.ext}.${process.pid}.tmp`);
  fs.rmSync(tmp, { force: true });
  const fd = fs.openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600);
  const written: TarEntry[] = [];
  try {
    const out = fs.createWriteStream('', { fd, autoClose: false });
    const compress = codec.compress();
    const done = pipeline(compress, out);
    try {
      await writeTree(compress, dir, runId, written);
      await write(compress, TAR_END);
    } finally {
      compress.end();
      await done;
    }
    fs.fsyncSync(fd);
  } catch (err) {
    fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  fs.closeSync(fd);
  fs.renameSync(tmp, archive);
  const problem = compareEntries(readBack(archive, codec), written);
  if (problem !== null) {
    fs.rmSync(archive, { force: true });
    throw new CorruptStateError(`archive of run ${runId} does not match its folder: ${problem}`);
  }
  const checksumFile = `${archive}.sha256`;
  const digest = createHash('sha256').update(fs.readFileSync(archive)).digest('hex');
  fs.writeFileSync(checksumFile, `${digest}  ${path.basename(archive)}\n`, { mode: 0o600 });
  fsyncDir(runsDir(root));
  const bytes = written.reduce((n, e) => n + e.size, 0);
  return { runId, archive, checksumFile, entries: written.length, bytes };
}

/** Removes a run's folder (links inside are removed, never followed). */
export function removeRunFolder(workspace: string, runId: string): void {
  const root = path.resolve(workspace);
  const dir = nativeRunDir(root, runId);
  if (lstatNoSymlink(dir) === null) return;
  ensureRealDir(dir, { root });
  fs.rmSync(dir, { recursive: true });
  fsyncDir(runsDir(root));
}

/** Checks an archive against its checksum file and reads it through; the problem, or null. */
export function verifyArchive(archive: string): string | null {
  const codec = CODECS.find((c) => archive.endsWith(`.${c.ext}`));
  if (codec === undefined) return `unknown archive format: ${path.basename(archive)}`;
  let line: string;
  try {
    line = fs.readFileSync(`${archive}.sha256`, 'utf8');
  } catch {
    return `checksum file ${path.basename(archive)}.sha256 is missing`;
  }
  let data: Buffer;
  try {
    data = fs.readFileSync(archive);
  } catch {
    return `archive ${archive} is missing`;
  }
  const digest = createHash('sha256').update(data).digest('hex');
  if (line.split(/\s+/)[0] !== digest) return 'checksum does not match (the file changed)';
  try {
    const entries = readTar(codec.decompress(data));
    if (!entries.some((e) => e.name.endsWith('/ledger.jsonl'))) return 'it holds no ledger.jsonl';
  } catch (err) {
    return `cannot be read: ${(err as Error).message}`;
  }
  return null;
}

function readBack(archive: string, codec: Codec): TarEntry[] {
  return readTar(codec.decompress(fs.readFileSync(archive)));
}

function compareEntries(got: TarEntry[], want: TarEntry[]): string | null {
  if (got.length !== want.length) return `${got.length} entries, expected ${want.length}`;
  for (let i = 0; i < want.length; i++) {
    const g = got[i]!;
    const w = want[i]!;
    if (g.name !== w.name || g.type !== w.type || g.sha256 !== w.sha256 || g.size !== w.size) {
      return `entry ${w.name} differs`;
    }
    if (g.linkTarget !== w.linkTarget) return `link ${w.name} differs`;
  }
  return null;
}

/** Writes `dir` (stored as `name`) and everything below it, depth first, names sorted. */
async function writeTree(
  out: NodeJS.WritableStream,
  dir: string,
  name: string,
  written: TarEntry[],
): Promise<void> {
  const st = fs.lstatSync(dir);
  await add(out, { name, type: 'dir', mode: st.mode, mtimeMs: st.mtimeMs, size: 0 }, written);
  const names = fs.readdirSync(dir).sort();
  for (const child of names) {
    const p = path.join(dir, child);
    const cst = fs.lstatSync(p);
    const entryName = `${name}/${child}`;
    if (cst.isSymbolicLink()) {
      const linkTarget = fs.readlinkSync(p);
      const e: TarEntry = {
        name: entryName,
        type: 'symlink',
        mode: 0o777,
        mtimeMs: cst.mtimeMs,
        size: 0,
        linkTarget,
      };
      await add(out, e, written);
    } else if (cst.isDirectory()) {
      await writeTree(out, p, entryName, written);
    } else if (cst.isFile()) {
      await writeFile(out, p, entryName, written);
    }
    // Sockets, FIFOs and devices have no content to keep: left out.
  }
}

async function writeFile(
  out: NodeJS.WritableStream,
  file: string,
  name: string,
  written: TarEntry[],
): Promise<void> {
  let fd: number;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new UnsafePathError(file, `refusing ${file}: it became a symlink`);
    }
    throw err;
  }
  try {
    confirmFdInside(fd, path.dirname(file), file);
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new UnsafePathError(file, `refusing ${file}: not a regular file`);
    const hash = createHash('sha256');
    const entry: TarEntry = {
      name,
      type: 'file',
      mode: st.mode,
      mtimeMs: st.mtimeMs,
      size: st.size,
    };
    await write(out, tarHeader(entry));
    let left = st.size;
    const buf = Buffer.alloc(Math.min(CHUNK, Math.max(1, left)));
    while (left > 0) {
      const n = fs.readSync(fd, buf, 0, Math.min(buf.length, left), null);
      if (n === 0) throw new CorruptStateError(`${file} shrank while it was archived`);
      const chunk = Buffer.from(buf.subarray(0, n));
      hash.update(chunk);
      await write(out, chunk);
      left -= n;
    }
    await write(out, padding(st.size));
    entry.sha256 = hash.digest('hex');
    written.push(entry);
  } finally {
    fs.closeSync(fd);
  }
}

async function add(out: NodeJS.WritableStream, e: TarEntry, written: TarEntry[]): Promise<void> {
  await write(out, tarHeader(e));
  written.push(e);
}

function write(out: NodeJS.WritableStream, chunk: Buffer): Promise<void> {
  if (chunk.length === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    out.write(chunk, (err) => (err ? reject(err) : resolve()));
  });
}
