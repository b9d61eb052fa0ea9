import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RecentKeys } from '../../src/chatops/dedupe.ts';
import { readable, readLogTail } from '../../src/chatops/log-tail.ts';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-chatops-tail-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('readLogTail', () => {
  it('returns the last lines without colours or JSON events, keeping a result text', async () => {
    const file = path.join(dir, 'step.log');
    const lines = Array.from({ length: 40 }, (_, i) => `line ${i}`);
    lines.push(
      '\u001b[32mgreen\u001b[0m',
      '{"type":"assistant","message":{}}',
      '{"type":"result","result":"All done."}',
    );
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const tail = await readLogTail(dir, file, { maxLines: 4 });
    expect(tail).toBe('line 38\nline 39\ngreen\nAll done.');
  });

  it('reads only the end of a big file and caps the characters', async () => {
    const file = path.join(dir, 'big.log');
    fs.writeFileSync(file, `${'x'.repeat(100_000)}\n${'y'.repeat(3000)}\n`);
    const tail = await readLogTail(dir, file, { maxChars: 100, maxBytes: 4096 });
    expect(tail).toHaveLength(100);
    expect(tail!.startsWith('…y')).toBe(true);
  });

  it('is undefined for a log an agent replaced by a link: the target is never shown', async () => {
    const secret = path.join(dir, 'secret.txt');
    fs.writeFileSync(secret, 'root:x:0:0:the-secret-line\n');
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(path.join(ws, 'logs'), { recursive: true });
    fs.symlinkSync(secret, path.join(ws, 'logs', 'plan-1.log'));
    expect(await readLogTail(ws, path.join(ws, 'logs', 'plan-1.log'))).toBeUndefined();
  });

  it('is undefined for a missing or empty log', async () => {
    expect(await readLogTail(dir, path.join(dir, 'missing.log'))).toBeUndefined();
    fs.writeFileSync(path.join(dir, 'empty.log'), '\n\n');
    expect(await readLogTail(dir, path.join(dir, 'empty.log'))).toBeUndefined();
    expect(readable('{not json}')).toBe('{not json}');
  });
});

describe('RecentKeys', () => {
  it('reports duplicates and forgets the oldest keys past its capacity', () => {
    const keys = new RecentKeys(2);
    expect(keys.add('a')).toBe(true);
    expect(keys.add('a')).toBe(false);
    keys.add('b');
    keys.add('c');
    expect(keys.add('a')).toBe(true);
    expect(keys.add('c')).toBe(false);
  });
});
