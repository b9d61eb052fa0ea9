import { describe, expect, it } from 'vitest';
import { likelyVerb } from '../../src/chatops/grammar.ts';
import { closest, editDistance } from '../../src/chatops/suggest.ts';

describe('did you mean', () => {
  it('counts a swap of two neighbouring letters as one edit', () => {
    expect(editDistance('staus', 'status')).toBe(1);
    expect(editDistance('rnu', 'run')).toBe(1);
    expect(editDistance('aprove', 'approve')).toBe(1);
    expect(editDistance('', 'run')).toBe(3);
    expect(editDistance('cancel', 'cancel')).toBe(0);
  });

  it('suggests only a word close enough to be the likely intent', () => {
    const words = ['status', 'approve', 'run'] as const;
    expect(closest('STAUS', words)).toBe('status');
    expect(closest('xyzzy', words)).toBeUndefined();
    // Two edits on a three-letter word is a different word, not a typo.
    expect(closest('fox', words)).toBeUndefined();
    expect(closest('anything', [])).toBeUndefined();
  });

  it('maps a typo, a prefix or a mistyped alias to a verb', () => {
    expect(likelyVerb('stauts')).toBe('status');
    expect(likelyVerb('appr')).toBe('approve');
    expect(likelyVerb('lop')).toBe('changes');
    expect(likelyVerb('lsit')).toBe('runs');
    expect(likelyVerb('frobnicate')).toBeUndefined();
    expect(likelyVerb('s')).toBeUndefined();
  });
});
