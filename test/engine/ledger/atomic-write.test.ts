import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  ensureRealDir,
  writeFileAtomic,
  writeFileAtomicAsync,
} from '../../../src/engine/ledger/atomic-write.ts';
import { hasCode } from '../../../src/errors.ts';
import { traceFs } from '../../support/fs-trace.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-atomic-'));
});
afterEach(() => {
  fs.rmSync(dir, { recursive: true, force: true });
});

function codeOf(fn: () => void): string | undefined {
  try {
    fn();
  } catch (err) {
    return hasCode(err, 'CORRUPT_STATE') ? 'CORRUPT_STATE' : String(err);
  }
  return undefined;
}

describe('writeFileAtomic', () => {
  it('creates then replaces the content and leaves no temp file', () => {
    const file = path.join(dir, 'run.json');
    writeFileAtomic(file, 'one');
    writeFileAtomic(file, 'two\n');
    expect(fs.readFileSync(file, 'utf8')).toBe('two\n');
    expect(fs.readdirSync(dir)).toEqual(['run.json']);
  });

  it('applies the requested mode', () => {
    const file = path.join(dir, 'secret.json');
    writeFileAtomic(file, '{}', { mode: 0o600 });
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('refuses a symlinked target and leaves the link target untouched', () => {
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'keep');
    const file = path.join(dir, 'run.json');
    fs.symlinkSync(outside, file);
    expect(codeOf(() => writeFileAtomic(file, 'evil'))).toBe('CORRUPT_STATE');
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep');
    expect(fs.readdirSync(dir).sort()).toEqual(['outside.txt', 'run.json']);
  });

  it('refuses a symlinked folder, also higher up when a root is given', () => {
    const real = path.join(dir, 'real');
    fs.mkdirSync(path.join(real, 'memory'), { recursive: true });
    fs.symlinkSync(real, path.join(dir, 'link'));
    expect(codeOf(() => writeFileAtomic(path.join(dir, 'link', 'x.json'), '{}'))).toBe(
      'CORRUPT_STATE',
    );
    const deep = path.join(dir, 'link', 'memory', 'directive.json');
    expect(codeOf(() => writeFileAtomic(deep, '{}', { root: dir }))).toBe('CORRUPT_STATE');
    expect(fs.readdirSync(path.join(real, 'memory'))).toEqual([]);
  });

  it('creates missing folders below the root when asked', () => {
    const file = path.join(dir, '.codemachine', 'memory', 'directive.json');
    writeFileAtomic(file, '{"action":"continue"}', { root: dir, mkdirs: true });
    expect(fs.readFileSync(file, 'utf8')).toBe('{"action":"continue"}');
  });

  it('refuses to replace a folder', () => {
    fs.mkdirSync(path.join(dir, 'run.json'));
    expect(codeOf(() => writeFileAtomic(path.join(dir, 'run.json'), '{}'))).toBe('CORRUPT_STATE');
  });
});

describe('ensureRealDir', () => {
  it('refuses a path outside its root', () => {
    expect(codeOf(() => ensureRealDir(path.join(dir, '..'), { root: dir }))).toBe('CORRUPT_STATE');
  });
});

describe('writeFileAtomicAsync', () => {
  it('replaces the content durably and leaves no temp file', async () => {
    const file = path.join(dir, 'run.json');
    await writeFileAtomicAsync(file, 'one');
    await writeFileAtomicAsync(file, Buffer.from('two\n'), { mode: 0o600 });
    expect(fs.readFileSync(file, 'utf8')).toBe('two\n');
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dir)).toEqual(['run.json']);
  });

  it("creates, writes, syncs and renames on the thread pool, never on the bridge's thread", async () => {
    const file = path.join(dir, 'run.json');
    fs.writeFileSync(file, 'old');
    const trace = traceFs();
    const sync = (
      ['openSync', 'writeSync', 'writeFileSync', 'fsyncSync', 'renameSync'] as const
    ).map((name) => vi.spyOn(fs, name));
    try {
      await writeFileAtomicAsync(file, 'new');
    } finally {
      trace.restore();
    }
    for (const spy of sync) {
      expect(spy.mock.calls.map((c) => String(c[0]))).toEqual([]);
      spy.mockRestore();
    }
    const order = trace.calls.map((c) =>
      c.file === dir ? `${c.op} folder` : c.file === file ? `${c.op} target` : `${c.op} temp`,
    );
    expect(order).toEqual(['write temp', 'fsync temp', 'rename target', 'fsync folder']);
    expect(fs.readFileSync(file, 'utf8')).toBe('new');
  });

  it('refuses a symlinked target and leaves the link target untouched', async () => {
    const outside = path.join(dir, 'outside.txt');
    fs.writeFileSync(outside, 'keep');
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    fs.symlinkSync(outside, path.join(ws, 'run.json'));
    await expect(writeFileAtomicAsync(path.join(ws, 'run.json'), 'evil')).rejects.toSatisfy((e) =>
      hasCode(e, 'CORRUPT_STATE'),
    );
    expect(fs.readFileSync(outside, 'utf8')).toBe('keep');
    expect(fs.readdirSync(ws)).toEqual(['run.json']);
  });
});
