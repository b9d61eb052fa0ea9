import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LedgerWriter, readLedger } from '../../../src/engine/ledger/ledger-file.ts';
import { formatLedgerLine, type LedgerEntry } from '../../../src/engine/ledger/ledger-format.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-ledger-'));
  file = path.join(dir, 'ledger.jsonl');
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function entry(seq: number, key: string): LedgerEntry {
  return {
    v: 1,
    seq,
    key,
    at: '2026-01-01T00:00:00.000Z',
    command: 'stepStarted',
    actor: { id: 'system' },
    events: [{ type: 'stepStarted', n: seq }],
    effects: [],
  };
}

async function writeAll(entries: LedgerEntry[]): Promise<void> {
  const w = LedgerWriter.open(file, 0);
  for (const e of entries) await w.append(formatLedgerLine(e));
  w.close();
}

describe('ledger file', () => {
  it('reads back what was appended, one line per command', async () => {
    const entries = [entry(1, 'a'), entry(2, 'b'), entry(3, 'c')];
    await writeAll(entries);
    const read = readLedger(file);
    expect(read.entries).toEqual(entries);
    expect(read.tornTail).toBeUndefined();
    expect(read.corrupt).toBeUndefined();
    expect(fs.readFileSync(file, 'utf8').split('\n')).toHaveLength(4);
  });

  it('reads a ledger larger than one read chunk, lines crossing the chunk boundaries', async () => {
    // ~600 KB: lines of odd lengths fall across the 256 KB chunks the reader uses.
    const entries = Array.from({ length: 1500 }, (_, i) => ({
      ...entry(i + 1, `k${i}`),
      events: [{ type: 'stepStarted', pad: 'x'.repeat(200 + (i % 97)) }],
    }));
    await writeAll(entries);
    const read = readLedger(file);
    expect(read.corrupt).toBeUndefined();
    expect(read.entries).toHaveLength(1500);
    expect(read.entries.at(-1)).toEqual(entries.at(-1));
    expect(read.goodBytes).toBe(fs.statSync(file).size);
  });

  it('reads a missing ledger as empty', () => {
    expect(readLedger(file)).toMatchObject({ entries: [], goodBytes: 0 });
  });

  it('skips and reports a torn last line, and the next append truncates it away', async () => {
    await writeAll([entry(1, 'a'), entry(2, 'b')]);
    const goodSize = fs.statSync(file).size;
    fs.appendFileSync(file, formatLedgerLine(entry(3, 'c')).slice(0, 25));
    const read = readLedger(file);
    expect(read.entries.map((e) => e.key)).toEqual(['a', 'b']);
    expect(read.tornTail).toMatchObject({ line: 3, bytes: 25 });
    expect(read.goodBytes).toBe(goodSize);

    const w = LedgerWriter.open(file, read.goodBytes);
    await w.append(formatLedgerLine(entry(3, 'c2')));
    w.close();
    const again = readLedger(file);
    expect(again.entries.map((e) => e.key)).toEqual(['a', 'b', 'c2']);
    expect(again.tornTail).toBeUndefined();
  });

  it('treats a newline-terminated garbage last line as torn too', async () => {
    await writeAll([entry(1, 'a')]);
    fs.appendFileSync(file, '\0\0\0\n');
    const read = readLedger(file);
    expect(read.entries).toHaveLength(1);
    expect(read.tornTail?.line).toBe(2);
  });

  it('reports a corrupt line in the middle and keeps only the lines before it', async () => {
    await writeAll([entry(1, 'a'), entry(2, 'b'), entry(3, 'c')]);
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines[1] = '{"v":1,"seq":2,"key":"b", oops';
    fs.writeFileSync(file, lines.join('\n'));
    const read = readLedger(file);
    expect(read.entries.map((e) => e.key)).toEqual(['a']);
    expect(read.corrupt?.line).toBe(2);
    expect(read.corrupt?.reason).toMatch(/not valid JSON/);
    expect(read.tornTail).toBeUndefined();
  });

  it('flags a repeated idempotency key and a seq going back as corrupt', async () => {
    await writeAll([entry(1, 'a'), entry(2, 'a'), entry(3, 'c')]);
    expect(readLedger(file).corrupt?.reason).toMatch(/key a appears twice/);
    fs.rmSync(file);
    await writeAll([entry(2, 'a'), entry(1, 'b'), entry(3, 'c')]);
    expect(readLedger(file).corrupt?.reason).toMatch(/goes back/);
  });

  it('a complete last line repeating a key is corruption, not a torn append', async () => {
    await writeAll([entry(1, 'a'), entry(2, 'a')]);
    const read = readLedger(file);
    expect(read.tornTail).toBeUndefined();
    expect(read.corrupt).toMatchObject({ line: 2, reason: 'idempotency key a appears twice' });
  });

  it('refuses to open a symlinked ledger', () => {
    fs.writeFileSync(path.join(dir, 'elsewhere'), '');
    fs.symlinkSync(path.join(dir, 'elsewhere'), file);
    expect(() => LedgerWriter.open(file, 0)).toThrow(/ELOOP/);
    expect(readLedger(file).refused).toEqual({
      reason: `refusing to follow the symlink ${file} planted in the workspace`,
      readable: false,
    });
  });

  it('refuses a FIFO at once, and a hard-linked ledger for writing (still reading it)', () => {
    execFileSync('mkfifo', [file]);
    expect(readLedger(file).refused?.reason).toBe(`${file} is not a regular file`);
    fs.rmSync(file);
    fs.writeFileSync(path.join(dir, 'other'), '');
    fs.linkSync(path.join(dir, 'other'), file);
    expect(readLedger(file).refused).toMatchObject({ readable: true });
    expect(readLedger(file).refused?.reason).toContain('has 2 hard links');
    expect(() => LedgerWriter.open(file, 0)).toThrow(/has 2 hard links/);
    expect(fs.readFileSync(path.join(dir, 'other'), 'utf8')).toBe('');
  });

  it('a line over the limit is corruption, found without reading the rest', () => {
    fs.writeFileSync(file, '');
    fs.truncateSync(file, 64 * 1024 * 1024);
    const read = readLedger(file, 1024);
    expect(read.corrupt).toEqual({
      line: 1,
      reason: 'line is over the 1 KB limit for a ledger line',
    });
    expect(read.tornTail).toBeUndefined();
  });
});
