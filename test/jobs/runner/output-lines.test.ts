import { describe, expect, it } from 'vitest';
import { parseProcStat } from '../../../src/jobs/runner/kill-tree.ts';
import {
  LineSplitter,
  parseProgressLine,
  TailBuffer,
} from '../../../src/jobs/runner/output-lines.ts';
import { bytesWithinCap, truncationMarker } from '../../../src/jobs/runner/output-sink.ts';

function split(chunks: Buffer[], max?: number): string[] {
  const out: string[] = [];
  const s = new LineSplitter((l) => out.push(l), max);
  for (const c of chunks) s.push(c);
  s.flush();
  return out;
}

describe('LineSplitter', () => {
  it('joins lines across chunks, even inside a multi-byte character', () => {
    const bytes = Buffer.from('héllo\r\nwörld\nlast');
    const cut = bytes.indexOf(0xa9); // second byte of "é"
    expect(split([bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual([
      'héllo',
      'wörld',
      'last',
    ]);
  });

  it('cuts an overlong line once and resumes at the next newline', () => {
    expect(split([Buffer.from('abcdefgh'), Buffer.from('ijk\nok\n')], 4)).toEqual(['abcd', 'ok']);
  });
});

describe('TailBuffer', () => {
  it('keeps the last N lines, each shortened', () => {
    const t = new TailBuffer(2, 3);
    for (const l of ['one', 'two', 'three']) t.push(l);
    expect(t.toArray()).toEqual(['two', 'thr…']);
  });
});

describe('parseProgressLine', () => {
  it('takes the text after ::progress', () => {
    expect(parseProgressLine('::progress step 2/5')).toBe('step 2/5');
    expect(parseProgressLine('::progress   ')).toBeNull();
    expect(parseProgressLine('say ::progress x')).toBeNull();
    expect(parseProgressLine('::progressive')).toBeNull();
  });
});

describe('output cap', () => {
  it('counts what still fits', () => {
    expect(bytesWithinCap(0, 10, 4)).toBe(4);
    expect(bytesWithinCap(8, 10, 4)).toBe(2);
    expect(bytesWithinCap(10, 10, 4)).toBe(0);
    expect(truncationMarker(8388608)).toBe('[phasebridge: output truncated after 8388608 bytes]');
  });
});

describe('parseProcStat', () => {
  it('reads state and process group even when comm has spaces and parentheses', () => {
    expect(parseProcStat('4242 (my (odd) name) Z 1 4240 4240 0 -1')).toEqual({
      state: 'Z',
      pgrp: 4240,
    });
    expect(parseProcStat('garbage')).toBeNull();
  });
});
