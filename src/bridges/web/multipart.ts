/**
 * A small streaming `multipart/form-data` reader for the console's uploads (RFC 7578). It never
 * holds more than the caps: text fields together at most `maxFieldBytes`; each file's bytes at
 * most `maxFileBytes` (past that the rest is only counted, so the refusal can say the size);
 * files past `maxFiles` only counted; the whole body at most `maxBodyBytes` (then 413, and the
 * rest is not read). `authorize` sees the text fields before the first file byte is kept (the
 * page puts its CSRF token first), so an unauthorised upload is refused before it is buffered.
 */
import type { IncomingMessage } from 'node:http';
import { InvalidInputError, UnauthorizedError } from '../../errors.ts';
import { BodyTooLargeError } from '../../http/respond.ts';

/** The caps of one multipart body. */
export interface MultipartLimits {
  /** Bytes kept of one file; more is counted, not kept. */
  readonly maxFileBytes: number;
  /** Files kept; more are counted (name and size), not kept. */
  readonly maxFiles: number;
  /** All text fields together. */
  readonly maxFieldBytes: number;
  /** The whole body; more is a BodyTooLargeError (413). */
  readonly maxBodyBytes: number;
}

/** One file part. */
export interface UploadedFile {
  /** The file name the browser sent (untrusted). */
  readonly filename: string;
  /** Its full size in bytes, counted even past the cap. */
  size: number;
  /** The kept bytes (empty when the file was past `maxFiles`). */
  readonly chunks: Buffer[];
  /** True when not every byte was kept (over `maxFileBytes`, or past `maxFiles`). */
  truncated: boolean;
}

/** A parsed body: the text fields and the files, in the order sent. */
export interface MultipartForm {
  readonly fields: Record<string, string>;
  readonly files: UploadedFile[];
}

/** Longest header block of one part. */
const MAX_PART_HEADER = 8 * 1024;

/** The boundary of a `multipart/form-data` content type, or undefined for any other type. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  const [type, ...params] = (contentType ?? '').split(';');
  if (type?.trim().toLowerCase() !== 'multipart/form-data') return undefined;
  for (const p of params) {
    const m = /^\s*boundary=(?:"([^"]{1,70})"|([^\s";]{1,70}))\s*$/i.exec(p);
    if (m) return m[1] ?? m[2];
  }
  throw new InvalidInputError('multipart/form-data without a boundary');
}

/** The name and file name of a part's Content-Disposition header. */
function dispositionOf(headers: string): { name: string; filename?: string } {
  const line = headers.split('\r\n').find((l) => /^content-disposition:/i.test(l));
  if (!line || !/:\s*form-data\s*(;|$)/i.test(line)) {
    throw new InvalidInputError('a multipart part without Content-Disposition: form-data');
  }
  const param = (key: string) =>
    new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"`, 'i').exec(line)?.[1]?.replace(/\\(.)/g, '$1');
  const name = param('name');
  if (name === undefined) throw new InvalidInputError('a multipart part without a name');
  const filename = param('filename');
  return filename === undefined ? { name } : { name, filename };
}

type Part =
  | { kind: 'field'; name: string; chunks: Buffer[] }
  | { kind: 'file'; file: UploadedFile };

/** Reads a multipart body with `boundary` from `req` under `limits`. */
export async function readMultipart(
  req: AsyncIterable<Buffer> & Pick<IncomingMessage, 'headers'>,
  boundary: string,
  limits: MultipartLimits,
  authorize: (fields: Record<string, string>) => boolean = () => true,
): Promise<MultipartForm> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limits.maxBodyBytes) throw new BodyTooLargeError(limits.maxBodyBytes);
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const form: MultipartForm = { fields: {}, files: [] };
  let fieldBytes = 0;
  let authorized = false;
  let state: 'preamble' | 'after' | 'headers' | 'body' | 'done' = 'preamble';
  let part: Part | undefined;
  // The first delimiter has no CRLF before it: start as if one was there.
  let buf: Buffer = Buffer.from('\r\n');
  let total = 0;

  const keep = (bytes: Buffer) => {
    if (bytes.length === 0 || part === undefined) return;
    if (part.kind === 'field') {
      fieldBytes += bytes.length;
      if (fieldBytes > limits.maxFieldBytes) throw new BodyTooLargeError(limits.maxFieldBytes);
      part.chunks.push(Buffer.from(bytes));
      return;
    }
    const f = part.file;
    const room = f.truncated ? 0 : Math.max(0, limits.maxFileBytes - f.size);
    if (room > 0) f.chunks.push(Buffer.from(bytes.subarray(0, room)));
    if (bytes.length > room) f.truncated = true;
    f.size += bytes.length;
  };
  const close = () => {
    if (part?.kind === 'field')
      form.fields[part.name] = Buffer.concat(part.chunks).toString('utf8');
    part = undefined;
  };
  const open = (headers: string) => {
    const d = dispositionOf(headers);
    if (d.filename === undefined) {
      part = { kind: 'field', name: d.name, chunks: [] };
      return;
    }
    if (!authorized) {
      authorized = authorize(form.fields);
      if (!authorized) throw new UnauthorizedError('Missing or wrong CSRF token: reload the page.');
    }
    const kept = form.files.filter((f) => f.filename !== '' || f.size > 0).length;
    const file: UploadedFile = { filename: d.filename, size: 0, chunks: [], truncated: false };
    // Past maxFiles a file is only counted: the refusal names how many came.
    if (kept >= limits.maxFiles) file.truncated = true;
    form.files.push(file);
    part = { kind: 'file', file };
  };

  for await (const chunk of req) {
    total += chunk.length;
    if (total > limits.maxBodyBytes) throw new BodyTooLargeError(limits.maxBodyBytes);
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    for (;;) {
      if (state === 'preamble' || state === 'body') {
        const at = buf.indexOf(delimiter);
        if (at < 0) {
          // Keep what could be the start of a delimiter split across chunks.
          const safe = Math.max(0, buf.length - delimiter.length + 1);
          if (state === 'body') keep(buf.subarray(0, safe));
          buf = buf.subarray(safe);
          break;
        }
        if (state === 'body') keep(buf.subarray(0, at));
        close();
        buf = buf.subarray(at + delimiter.length);
        state = 'after';
      }
      if (state === 'after') {
        if (buf.length < 2) break;
        const next = buf.subarray(0, 2).toString('latin1');
        if (next === '--') {
          state = 'done';
          break;
        }
        if (next !== '\r\n') throw new InvalidInputError('a malformed multipart body');
        buf = buf.subarray(2);
        state = 'headers';
      }
      if (state === 'headers') {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buf.length > MAX_PART_HEADER)
            throw new InvalidInputError('a multipart header too long');
          break;
        }
        open(buf.subarray(0, end).toString('utf8'));
        buf = buf.subarray(end + 4);
        state = 'body';
        continue;
      }
      break;
    }
    if (state === 'done') buf = Buffer.alloc(0);
  }
  if (state !== 'done') throw new InvalidInputError('the multipart body ended early');
  if (!authorized && !authorize(form.fields)) {
    throw new UnauthorizedError('Missing or wrong CSRF token: reload the page.');
  }
  // A form's empty file input sends a part with no name and no bytes: not a file.
  form.files.splice(
    0,
    form.files.length,
    ...form.files.filter((f) => f.filename !== '' || f.size > 0),
  );
  return form;
}
