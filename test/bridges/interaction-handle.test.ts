import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeHandle, encodeHandle } from '../../src/bridges/interaction-handle.ts';
import { InvalidInputError } from '../../src/errors.ts';

const schema = z.object({ i: z.string().min(1), n: z.number().int() });

describe('interaction handles', () => {
  it("round-trips an adapter's data through an opaque handle of its platform", () => {
    const interaction = encodeHandle('telegram', { i: 'cb-1', n: 7 });
    expect(interaction.platform).toBe('telegram');
    expect(decodeHandle(interaction, 'telegram', schema, 'Telegram')).toEqual({ i: 'cb-1', n: 7 });
  });

  it('refuses handles of another platform, not JSON, or not matching the schema', () => {
    const bad = [
      encodeHandle('slack', { i: 'cb-1', n: 7 }),
      { platform: 'telegram' as const, handle: 'not json' },
      encodeHandle('telegram', { i: '', n: 7 }),
      encodeHandle('telegram', { i: 'cb-1' }),
    ];
    for (const interaction of bad) {
      expect(() => decodeHandle(interaction, 'telegram', schema, 'Telegram')).toThrow(
        new InvalidInputError('not a Telegram interaction handle'),
      );
    }
  });

  it('turns a transform that throws into the same INVALID_INPUT', () => {
    const strict = schema.transform((d) => {
      if (d.n < 0) throw new Error('negative');
      return d;
    });
    const interaction = encodeHandle('web', { i: 'x', n: -1 });
    expect(() => decodeHandle(interaction, 'web', strict, 'web console')).toThrow(
      InvalidInputError,
    );
  });
});
