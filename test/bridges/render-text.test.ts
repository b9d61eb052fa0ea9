import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RichSegment } from '../../src/bridges/messages.ts';
import {
  bold,
  code,
  composeBody,
  link,
  plain,
  plainTextOf,
  prose,
  rich,
  splitRichText,
  splitRichTextInto,
} from '../../src/bridges/render-text.ts';

const segment: fc.Arbitrary<RichSegment> = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 40 }).map((t) => rich(t)[0] ?? bold('x')),
  fc.string({ minLength: 1, maxLength: 40 }).map(bold),
  fc.string({ minLength: 1, maxLength: 40 }).map(code),
  fc.string({ minLength: 1, maxLength: 40 }).map((t) => link(t, 'https://x.test')),
  fc.constantFrom(rich('\n')[0]!, rich(' ')[0]!),
);

describe('RichText helpers', () => {
  it('builds text from strings and segments, dropping empty ones', () => {
    expect(rich('a', bold('b'), '', code('c'))).toEqual([
      { kind: 'plain', text: 'a' },
      { kind: 'bold', text: 'b' },
      { kind: 'code', text: 'c' },
    ]);
  });

  it('appends fields as label: value lines under the text', () => {
    const body = composeBody(rich('Run started'), [
      { label: 'Run', value: '2026-11-29T143000Z-x' },
      { label: 'Phase', value: 'A' },
    ]);
    expect(plainTextOf(body)).toBe('Run started\n\nRun: 2026-11-29T143000Z-x\nPhase: A');
    expect(body).toContainEqual(bold('Phase:'));
  });

  it('splits at a newline when one is near the limit', () => {
    const text = rich(`${'a'.repeat(7)}\n${'b'.repeat(5)}`);
    expect(splitRichText(text, 10).map(plainTextOf)).toEqual([`${'a'.repeat(7)}\n`, 'bbbbb']);
  });

  it('never splits a surrogate pair', () => {
    const chunks = splitRichText(rich('😀😀😀'), 3).map(plainTextOf);
    expect(chunks).toEqual(['😀', '😀', '😀']);
  });

  it('splits any text into chunks within the limit that concatenate to the input', () => {
    fc.assert(
      fc.property(
        fc.array(segment, { maxLength: 30 }),
        fc.integer({ min: 2, max: 50 }),
        (segs, max) => {
          const chunks = splitRichText(segs, max);
          expect(
            chunks.every((c) => plainTextOf(c).length <= max && plainTextOf(c).length > 0),
          ).toBe(true);
          expect(chunks.map(plainTextOf).join('')).toBe(plainTextOf(segs));
          // Formatting survives: the kinds of the visible characters are unchanged.
          const kinds = (s: readonly RichSegment[]) =>
            s.flatMap((x) => [...x.text].map(() => x.kind)).join();
          expect(kinds(chunks.flat())).toBe(kinds(segs));
        },
      ),
    );
  });

  it('caps the number of chunks with a marker saying how much is left out', () => {
    const chunks = splitRichTextInto(rich('z'.repeat(250)), 100, 2);
    expect(chunks).toHaveLength(2);
    const last = plainTextOf(chunks[1]!);
    expect(last.length).toBeLessThanOrEqual(100);
    const shown = plainTextOf(chunks[0]!).length + last.indexOf('\n');
    expect(last).toMatch(new RegExp(`… \\(${250 - shown} more characters not shown\\)$`));
  });
});

describe('prose', () => {
  it('turns spans typed between backticks into code, and leaves lone backticks alone', () => {
    const cases: [input: string, expected: RichSegment[]][] = [
      ['Send `help` now', [plain('Send '), code('help'), plain(' now')]],
      ['`a` and `b c`', [code('a'), plain(' and '), code('b c')]],
      ['no code', [plain('no code')]],
      ['a lone ` stays', [plain('a lone ` stays')]],
      ['not `across\nlines`', [plain('not `across\nlines`')]],
    ];
    for (const [input, expected] of cases) expect(prose(input)).toEqual(expected);
  });
});
