/**
 * The console's streaming multipart reader: the same fields and files whatever the chunking
 * (a delimiter split across chunks included), file bytes kept only up to the cap while the size
 * is still counted, files past the count only counted, the body cap, the authorisation seen
 * before any file byte, and malformed bodies refused.
 */
import { describe, expect, it } from 'vitest';
import {
  type MultipartLimits,
  multipartBoundary,
  readMultipart,
} from '../../../src/bridges/web/multipart.ts';

const BOUNDARY = '----pbBoundary7MA4YWxkTrZu0gW';

const LIMITS: MultipartLimits = {
  maxFileBytes: 1024,
  maxFiles: 2,
  maxFieldBytes: 1024,
  maxBodyBytes: 64 * 1024,
};

type Part = { name: string; value: string } | { name: string; filename: string; data: Buffer };

/** A body as a browser builds it. */
function body(parts: Part[]): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    const disposition =
      'filename' in p
        ? `form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/octet-stream`
        : `form-data; name="${p.name}"`;
    out.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n\r\n`));
    out.push('filename' in p ? p.data : Buffer.from(p.value));
    out.push(Buffer.from('\r\n'));
  }
  out.push(Buffer.from(`--${BOUNDARY}--\r\n`));
  return Buffer.concat(out);
}

/** The body cut into chunks of `size` bytes, as a request stream. */
function request(raw: Buffer, size: number) {
  const chunks: Buffer[] = [];
  for (let i = 0; i < raw.length; i += size) chunks.push(raw.subarray(i, i + size));
  return {
    headers: { 'content-length': String(raw.length) },
    async *[Symbol.asyncIterator]() {
      yield* chunks;
    },
  };
}

/** Data that contains most of the delimiter, to catch a naive search. */
const TRICKY = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff]),
  Buffer.from(`\r\n--${BOUNDARY.slice(0, -1)}x\r\n--`),
  Buffer.alloc(40, 0x2d),
]);

describe('multipartBoundary', () => {
  it('reads the boundary (quoted or not) of multipart/form-data only', () => {
    expect(multipartBoundary(`multipart/form-data; boundary=${BOUNDARY}`)).toBe(BOUNDARY);
    expect(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b"')).toBe('a b');
    expect(multipartBoundary('application/json')).toBeUndefined();
    expect(multipartBoundary(undefined)).toBeUndefined();
    expect(() => multipartBoundary('multipart/form-data')).toThrow(/without a boundary/);
  });
});

describe('readMultipart', () => {
  const parts: Part[] = [
    { name: 'csrf', value: 'tok' },
    { name: 'text', value: 'run look ✓ at this' },
    { name: 'file', filename: 'screen.jpg', data: TRICKY },
    { name: 'file', filename: 'notes.txt', data: Buffer.from('hello\r\n') },
  ];

  it('gives the same fields and files however the body is chunked', async () => {
    const raw = body(parts);
    for (const size of [1, 2, 3, 7, 13, 64, raw.length]) {
      const form = await readMultipart(request(raw, size), BOUNDARY, LIMITS);
      expect(form.fields).toEqual({ csrf: 'tok', text: 'run look ✓ at this' });
      expect(
        form.files.map((f) => [f.filename, f.size, f.truncated, Buffer.concat(f.chunks)]),
      ).toEqual([
        ['screen.jpg', TRICKY.length, false, TRICKY],
        ['notes.txt', 7, false, Buffer.from('hello\r\n')],
      ]);
    }
  });

  it('keeps a file only up to the cap but counts its whole size', async () => {
    const big = Buffer.alloc(5000, 7);
    const form = await readMultipart(
      request(body([{ name: 'file', filename: 'big.jpg', data: big }]), 100),
      BOUNDARY,
      LIMITS,
    );
    const [f] = form.files;
    expect([f!.size, f!.truncated, Buffer.concat(f!.chunks).length]).toEqual([5000, true, 1024]);
  });

  it('counts files past maxFiles without keeping their bytes', async () => {
    const file = (n: number): Part => ({
      name: 'file',
      filename: `${n}.txt`,
      data: Buffer.from('x'),
    });
    const form = await readMultipart(request(body([1, 2, 3].map(file)), 9), BOUNDARY, LIMITS);
    expect(form.files.map((f) => [f.filename, f.size, f.truncated, f.chunks.length])).toEqual([
      ['1.txt', 1, false, 1],
      ['2.txt', 1, false, 1],
      ['3.txt', 1, true, 0],
    ]);
  });

  it('leaves out an empty file input (no name, no bytes)', async () => {
    const raw = body([
      { name: 'text', value: 'status' },
      { name: 'file', filename: '', data: Buffer.alloc(0) },
    ]);
    const form = await readMultipart(request(raw, 5), BOUNDARY, LIMITS);
    expect(form.files).toEqual([]);
  });

  it('refuses a body over the cap, announced or streamed, without reading on', async () => {
    const raw = body([{ name: 'file', filename: 'a.jpg', data: Buffer.alloc(3000) }]);
    const small = { ...LIMITS, maxBodyBytes: 2000 };
    await expect(readMultipart(request(raw, 500), BOUNDARY, small)).rejects.toMatchObject({
      code: 'INVALID_INPUT',
      message: 'request body is larger than 2000 bytes',
    });
    let read = 0;
    const unannounced = {
      headers: {},
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < raw.length; i += 500) {
          read += 1;
          yield raw.subarray(i, i + 500);
        }
      },
    };
    await expect(readMultipart(unannounced, BOUNDARY, small)).rejects.toThrow(/larger than 2000/);
    expect(read).toBe(5); // stopped at the chunk that crossed 2000 bytes, of 7
  });

  it('asks `authorize` with the fields sent before the first file, and keeps no byte when refused', async () => {
    const seen: Record<string, string>[] = [];
    const authorize = (fields: Record<string, string>) => {
      seen.push({ ...fields });
      return fields.csrf === 'good';
    };
    await expect(
      readMultipart(request(body(parts), 11), BOUNDARY, LIMITS, authorize),
    ).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    expect(seen).toEqual([{ csrf: 'tok', text: 'run look ✓ at this' }]);
    // The token after the file is too late: the file was refused before it was read.
    const late = body([parts[2]!, { name: 'csrf', value: 'good' }]);
    await expect(readMultipart(request(late, 11), BOUNDARY, LIMITS, authorize)).rejects.toThrow(
      /CSRF/,
    );
    // No file at all: the fields are checked at the end.
    const noFile = body([{ name: 'csrf', value: 'bad' }]);
    await expect(readMultipart(request(noFile, 4), BOUNDARY, LIMITS, authorize)).rejects.toThrow(
      /CSRF/,
    );
  });

  it('refuses malformed bodies with a clear error', async () => {
    const cut = body(parts).subarray(0, 200);
    await expect(readMultipart(request(cut, 50), BOUNDARY, LIMITS)).rejects.toThrow(
      'the multipart body ended early',
    );
    const noName = Buffer.from(
      `--${BOUNDARY}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${BOUNDARY}--`,
    );
    await expect(readMultipart(request(noName, 8), BOUNDARY, LIMITS)).rejects.toThrow(
      'a multipart part without a name',
    );
    const fields = body([{ name: 'text', value: 'x'.repeat(2000) }]);
    await expect(readMultipart(request(fields, 100), BOUNDARY, LIMITS)).rejects.toThrow(
      /larger than 1024/,
    );
  });
});
