import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  appendLogChunk,
  gapFiller,
  LogShipper,
} from '../../../src/jobs/orchestrator/remote-log.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function workspace(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-rlog-'));
  dirs.push(d);
  return d;
}
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('shipped logs on the bridge', () => {
  it('writes chunks in order, skips a chunk heard twice, keeps only the new part of an overlap', () => {
    const ws = workspace();
    const file = path.join(ws, '.phasebridge', 'runs', 'r', 'logs', 'plan-1.log');
    expect(appendLogChunk(ws, file, { offset: 0, data: b64('hello ') })).toBe('written');
    expect(appendLogChunk(ws, file, { offset: 0, data: b64('hello ') })).toBe('duplicate');
    expect(appendLogChunk(ws, file, { offset: 3, data: b64('lo world\n') })).toBe('written');
    expect(fs.readFileSync(file, 'utf8')).toBe('hello world\n');
  });

  it('fills a gap with a note of exactly its length, so later chunks still line up', () => {
    const ws = workspace();
    const file = path.join(ws, 'logs', 'x.log');
    appendLogChunk(ws, file, { offset: 0, data: b64('start\n') });
    // 100 bytes were lost (a bridge that was down), then a chunk at offset 106 arrives.
    expect(appendLogChunk(ws, file, { offset: 106, data: b64('later\n') })).toBe('gap');
    expect(appendLogChunk(ws, file, { offset: 106, data: b64('later\n') })).toBe('duplicate');
    const text = fs.readFileSync(file, 'utf8');
    expect(text.length).toBe(112);
    expect(text).toContain('100 bytes of this log were not received');
    expect(text.endsWith('later\n')).toBe(true);
    expect(gapFiller(3).toString()).toBe('...');
  });

  it('refuses a log path that leaves the workspace through a planted link', () => {
    const ws = workspace();
    const outside = workspace();
    fs.mkdirSync(path.join(ws, 'logs'));
    fs.symlinkSync(outside, path.join(ws, 'logs', 'evil'));
    expect(() =>
      appendLogChunk(ws, path.join(ws, 'logs', 'evil', 'x.log'), { offset: 0, data: b64('x') }),
    ).toThrow();
    expect(fs.readdirSync(outside)).toEqual([]);
  });

  it('the worker side ships a file as it grows and the rest on stop, byte for byte', () => {
    const ws = workspace();
    const src = path.join(ws, 'agent.log');
    const dst = path.join(ws, 'bridge.log');
    const shipper = new LogShipper(src, (chunk) => appendLogChunk(ws, dst, chunk));
    const big = `${'é'.repeat(70_000)}\nend\n`; // > one chunk, multi-byte characters across the cut
    fs.writeFileSync(src, big);
    shipper.stop();
    expect(fs.readFileSync(dst, 'utf8')).toBe(big);
  });
});
