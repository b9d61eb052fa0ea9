/**
 * The checkpoint content digest (issue 36): a file added beside the step's listed files after the
 * checkpoint posted (neither an artifact nor in the changed-files list) changes the digest and is
 * named; the bridge's own state folders, `.git` and `node_modules` are not looked at; a re-check
 * with nothing changed reads no file; a folder reached through a link is not listed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { changeWords, type DigestInput, digestOf } from '../../src/chatops/checkpoint-digest.ts';
import { FileHashCache } from '../../src/chatops/file-hash-cache.ts';

let ws: string;
let outside: string;
beforeEach(() => {
  ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-digest-ws-'));
  outside = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-digest-out-'));
  fs.mkdirSync(path.join(ws, 'src'));
  fs.writeFileSync(path.join(ws, 'plan.md'), '# Plan\n');
  fs.writeFileSync(path.join(ws, 'src', 'login.ts'), 'export {};\n');
});
afterEach(() => {
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(outside, { recursive: true, force: true });
});

const input = (): DigestInput => ({
  workspace: ws,
  artifacts: ['plan.md'],
  changes: { base: 'a'.repeat(40), files: [{ path: 'src/login.ts', added: 1, removed: 0 }] },
  finalAnswer: 'done',
});

describe('checkpoint digest', () => {
  it('notices a new file beside a changed file, by name, without reading it', () => {
    const cache = new FileHashCache();
    const posted = digestOf(input(), cache);
    const reads = cache.reads;
    fs.writeFileSync(path.join(ws, 'src', 'backdoor.ts'), 'evil();\n');
    const after = digestOf(input(), cache);
    expect(after.digest).not.toBe(posted.digest);
    expect(changeWords(posted.parts, after.parts)).toBe(
      `${path.join('src', 'backdoor.ts')} changed`,
    );
    expect(cache.reads).toBe(reads);
    // Beside an artifact at the top too; a removed file counts as well.
    fs.writeFileSync(path.join(ws, 'notes.md'), 'hi\n');
    const withNotes = digestOf(input(), cache);
    fs.rmSync(path.join(ws, 'notes.md'));
    expect(digestOf(input(), cache).digest).not.toBe(withNotes.digest);
  });

  it('leaves the bridge state, version control and dependencies out, and re-checks incrementally', () => {
    const cache = new FileHashCache();
    const posted = digestOf(input(), cache);
    const reads = cache.reads;
    for (const dir of ['.phasebridge/runs/x', '.codemachine', 'node_modules/left-pad']) {
      fs.mkdirSync(path.join(ws, dir), { recursive: true });
      fs.writeFileSync(path.join(ws, dir, 'state.json'), '{}\n');
    }
    fs.writeFileSync(path.join(ws, '.git'), 'gitdir: elsewhere\n');
    expect(digestOf(input(), cache).digest).toBe(posted.digest);
    expect(cache.reads).toBe(reads);
  });

  it('lists no folder reached through a link', () => {
    fs.writeFileSync(path.join(outside, 'secret.ts'), 'x\n');
    fs.symlinkSync(outside, path.join(ws, 'linked'));
    const cache = new FileHashCache();
    expect(cache.names(ws, 'linked')).toEqual([]);
    expect(cache.names(ws, '..')).toEqual([]);
    expect(cache.names(ws, 'src')).toEqual(['login.ts']);
  });
});
