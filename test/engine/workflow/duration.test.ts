import { describe, expect, it } from 'vitest';
import { formatDuration, parseDuration } from '../../../src/engine/workflow/duration.ts';

describe('parseDuration', () => {
  it('reads every unit', () => {
    expect(['500ms', '30s', '5m', '2h', '1d'].map(parseDuration)).toEqual([
      500, 30_000, 300_000, 7_200_000, 86_400_000,
    ]);
  });

  it('refuses anything else', () => {
    for (const bad of ['', '5', '5 m', '1.5h', '-1s', '0s', '2w', 'soon', '10mss']) {
      expect(parseDuration(bad)).toBeNull();
    }
  });

  it('formatDuration is its inverse', () => {
    for (const text of ['500ms', '30s', '5m', '2h', '1d', '90s', '1500ms']) {
      expect(formatDuration(parseDuration(text)!)).toBe(text);
    }
  });
});
