import { describe, expect, it } from 'vitest';
import { assertRunId, isValidRunId, newRunId, runSlug } from '../../../src/engine/store/run-id.ts';

describe('run ids', () => {
  it('are made from a UTC time and a slug of free text', () => {
    const now = new Date('2026-11-29T14:30:05.123Z');
    expect(newRunId('Add login page!', now)).toBe('2026-11-29T143005Z-add-login-page');
    expect(newRunId('', now)).toBe('2026-11-29T143005Z-run');
    expect(newRunId('../../etc/passwd', now)).toBe('2026-11-29T143005Z-etc-passwd');
    expect(newRunId('Crème brûlée', now)).toBe('2026-11-29T143005Z-creme-brulee');
  });

  it('slugs are short, lowercase and never end in a dash', () => {
    const slug = runSlug(`${'word '.repeat(30)}`);
    expect(slug.length).toBeLessThanOrEqual(48);
    expect(slug).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  });

  it('every generated id is valid', () => {
    for (const s of ['x', 'Fix #12: crash', '日本語', '  --  ']) {
      expect(isValidRunId(newRunId(s, new Date()))).toBe(true);
    }
  });

  it('refuses ids that could escape the runs folder or are not the format', () => {
    for (const bad of [
      '../x',
      '2026-11-29T143005Z-../x',
      '2026-11-29T143005Z-a/b',
      'run',
      '2026-11-29T143005Z-',
    ]) {
      expect(isValidRunId(bad)).toBe(false);
      expect(() => assertRunId(bad)).toThrow(/invalid run id/);
    }
    expect(() => assertRunId('2026-11-29T143005Z-ok')).not.toThrow();
  });
});
