/**
 * The digest's file cache (issue 36): an unchanged file is not read again, a changed one is, and
 * a symlink is never followed (its target's content does not count and is never read).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileHashCache } from '../../src/chatops/file-hash-cache.ts';

let ws: string;
let outside: string;
beforeEach(() => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-hash-ws-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-hash-out-'));
});
afterEach(() => {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

describe('FileHashCache', () => {
  it('reads a file once while it is unchanged, and again once it changed', () => {
    const cache = new FileHashCache();
    fs.writeFileSync(path.join(ws, 'plan.md'), 'one\n');
    const first = cache.hash(ws, 'plan.md');
    expect(first).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(cache.hash(ws, 'plan.md')).toBe(first);
    expect(cache.reads).toBe(1);
    // Same size, new content: the ctime (and mtime) moved, so it is read again.
    fs.writeFileSync(path.join(ws, 'plan.md'), 'two\n');
    const second = cache.hash(ws, 'plan.md');
    expect(second).not.toBe(first);
    expect(cache.reads).toBe(2);
    fs.rmSync(path.join(ws, 'plan.md'));
    expect(cache.hash(ws, 'plan.md')).toBe('absent');
  });

  it('never follows a symlink, to a file or through a folder', () => {
    const cache = new FileHashCache();
    fs.writeFileSync(path.join(outside, 'secret'), 'secret\n');
    fs.symlinkSync(path.join(outside, 'secret'), path.join(ws, 'plan.md'));
    fs.symlinkSync(outside, path.join(ws, 'docs'));
    expect(cache.hash(ws, 'plan.md')).toBe('symlink (not followed)');
    expect(cache.hash(ws, 'docs/secret')).toMatch(/^refused/);
    expect(cache.reads).toBe(0);
    // A listed path leaving the workspace is refused without a look.
    expect(cache.hash(ws, path.join('..', path.basename(outside), 'secret'))).toBe(
      'refused (outside the workspace)',
    );
    // The target changing changes nothing the digest sees.
    fs.writeFileSync(path.join(outside, 'secret'), 'changed\n');
    expect(cache.hash(ws, 'plan.md')).toBe('symlink (not followed)');
  });
});
