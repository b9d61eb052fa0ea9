import { describe, expect, it } from 'vitest';
import {
  costWords,
  countWords,
  durationWords,
  namesWords,
  policyWords,
  telemetryWords,
  timeWords,
} from '../../src/chatops/words.ts';

describe('words', () => {
  it('says durations the way people read them', () => {
    expect(durationWords(400)).toBe('400 ms');
    expect(durationWords(-5)).toBe('0 ms');
    expect(durationWords(45_000)).toBe('45 s');
    expect(durationWords(200_000)).toBe('3 min 20 s');
    expect(durationWords(20 * 60_000 + 5_000)).toBe('20 min');
    expect(durationWords(2 * 3_600_000)).toBe('2 h');
    expect(durationWords(90 * 60_000)).toBe('1 h 30 min');
    expect(durationWords(3 * 86_400_000)).toBe('3 d');
  });

  it('puts a checkpoint policy in words', () => {
    expect(
      policyWords({ approvals: 2, fourEyes: true, expiresInMs: 7_200_000, onExpiry: 'reject' }),
    ).toBe('needs 2 approvals, not from the requester; expires in 2 h, then rejected');
    expect(policyWords({ approvals: 1, fourEyes: false, onExpiry: 'keep' })).toBe(
      'needs 1 approval',
    );
    expect(
      policyWords({ approvals: 1, fourEyes: false, expiresInMs: 1_800_000, onExpiry: 'keep' }),
    ).toBe('needs 1 approval; expires in 30 min, then kept open for a human');
  });

  it('formats tokens, cost, names and times', () => {
    expect(countWords(950)).toBe('950');
    expect(countWords(1234)).toBe('1.2k');
    expect(countWords(3_400_000)).toBe('3.4M');
    expect(costWords(0.04)).toBe('$0.04');
    expect(costWords(0.0031)).toBe('$0.0031');
    expect(
      telemetryWords({ tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 }),
    ).toBeUndefined();
    expect(telemetryWords({ tokensIn: 1200, tokensOut: 300, cachedTokens: 0, costUsd: 0.5 })).toBe(
      '1.2k in / 300 out · $0.50',
    );
    expect(namesWords([{ id: 'a', name: 'Alice' }, { id: 'b' }, { id: 'c', name: 'Carol' }])).toBe(
      'Alice, b and Carol',
    );
    expect(timeWords('2026-11-29T14:30:12.000Z')).toBe('2026-11-29 14:30 UTC');
  });
});
