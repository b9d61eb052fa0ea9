/**
 * A minimal ustar writer and reader, enough for archiving run folders: folders, regular files
 * and symlinks (stored as links, never followed). Written here rather than spawning `tar` so
 * every file is opened with O_NOFOLLOW and checked to be inside the run folder, and so the
 * archive can be read back and compared, entry by entry, before the folder is removed.
 */
import { createHash } from 'node:crypto';

const BLOCK = 512;

/** One archive entry as stored. */
export interface TarEntry {
  /** Path inside the archive, '/'-separated (folders end without a slash). */
  name: string;
  type: 'file' | 'dir' | 'symlink';
  mode: number;
  mtimeMs: number;
  size: number;
  /** The link target of a symlink. */
  linkTarget?: string;
  /** SHA-256 of a file's content (hex). */
  sha256?: string;
}

/** The 512-byte ustar header of an entry; throws when the name cannot be stored. */
export function tarHeader(e: TarEntry): Buffer {
  const h = Buffer.alloc(BLOCK);
  const full = e.type === 'dir' ? `${e.name}/` : e.name;
  const [prefix, name] = splitName(full);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, e.mode & 0o7777);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, e.type === 'file' ? e.size : 0);
  octal(h, 136, 12, Math.floor(e.mtimeMs / 1000));
  h.fill(0x20, 148, 156); // checksum field counts as spaces while summing
  h.write(e.type === 'file' ? '0' : e.type === 'dir' ? '5' : '2', 156, 1, 'ascii');
  if (e.linkTarget !== undefined) {
    if (Buffer.byteLength(e.linkTarget) > 100) throw new Error(`link target too long: ${e.name}`);
    h.write(e.linkTarget, 157, 100, 'utf8');
  }
  h.write('ustar\u000000', 257, 8, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return h;
}

/** Zero bytes that pad `size` bytes of content to a whole block. */
export function padding(size: number): Buffer {
  return Buffer.alloc((BLOCK - (size % BLOCK)) % BLOCK);
}

/** The two zero blocks that end an archive. */
export const TAR_END = Buffer.alloc(BLOCK * 2);

/** Reads a whole (uncompressed) tar into its entries, hashing each file's content. */
export function readTar(data: Buffer): TarEntry[] {
  const out: TarEntry[] = [];
  let at = 0;
  while (at + BLOCK <= data.length) {
    const h = data.subarray(at, at + BLOCK);
    if (h.every((b) => b === 0)) return out;
    if (!checksumOk(h)) throw new Error(`bad tar header checksum at byte ${at}`);
    const name = text(h, 0, 100);
    const prefix = text(h, 345, 155);
    const full = prefix === '' ? name : `${prefix}/${name}`;
    const flag = String.fromCharCode(h[156] ?? 0);
    const size = Number.parseInt(text(h, 124, 12) || '0', 8);
    const mode = Number.parseInt(text(h, 100, 8) || '0', 8);
    const mtimeMs = Number.parseInt(text(h, 136, 12) || '0', 8) * 1000;
    at += BLOCK;
    if (flag === '5') {
      out.push({ name: full.replace(/\/$/, ''), type: 'dir', mode, mtimeMs, size: 0 });
    } else if (flag === '2') {
      const linkTarget = text(h, 157, 100);
      out.push({ name: full, type: 'symlink', mode, mtimeMs, size: 0, linkTarget });
    } else if (flag === '0' || flag === '\u0000') {
      if (at + size > data.length) throw new Error(`tar entry ${full} is cut short`);
      const sha256 = createHash('sha256')
        .update(data.subarray(at, at + size))
        .digest('hex');
      out.push({ name: full, type: 'file', mode, mtimeMs, size, sha256 });
      at += size + padding(size).length;
    } else {
      throw new Error(`unexpected tar entry type '${flag}' for ${full}`);
    }
  }
  throw new Error('tar archive has no end marker');
}

function splitName(full: string): [string, string] {
  if (Buffer.byteLength(full) <= 100) return ['', full];
  // ustar: prefix (≤155) + '/' + name (≤100), split at a slash.
  for (let i = full.lastIndexOf('/'); i > 0; i = full.lastIndexOf('/', i - 1)) {
    const prefix = full.slice(0, i);
    const name = full.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100 && name !== '') {
      return [prefix, name];
    }
  }
  throw new Error(`path too long for a tar archive: ${full}`);
}

function octal(h: Buffer, at: number, len: number, value: number): void {
  h.write(`${value.toString(8).padStart(len - 1, '0')}\u0000`, at, len, 'ascii');
}

function text(h: Buffer, at: number, len: number): string {
  const raw = h.subarray(at, at + len);
  const end = raw.indexOf(0);
  return raw
    .subarray(0, end === -1 ? len : end)
    .toString('utf8')
    .trim();
}

function checksumOk(h: Buffer): boolean {
  const stored = Number.parseInt(text(h, 148, 8), 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] ?? 0);
  return sum === stored;
}
