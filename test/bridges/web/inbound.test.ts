/** Typed text and posted bodies become neutral events from web:admin. */
import { describe, expect, it } from 'vitest';
import {
  commandBody,
  decodeInteraction,
  encodeInteraction,
  parseBody,
  parseTypedCommand,
  toCommand,
} from '../../../src/bridges/web/inbound.ts';

describe('typed commands', () => {
  it('reads the verb with or without a slash, in any case', () => {
    expect(parseTypedCommand('/run demo add login')).toEqual({
      name: 'run',
      args: ['demo', 'add', 'login'],
    });
    expect(parseTypedCommand('  APPROVE  2026-01-01T000000Z-x  ok ')).toEqual({
      name: 'approve',
      args: ['2026-01-01T000000Z-x', 'ok'],
    });
    expect(parseTypedCommand('   ')).toBeUndefined();
    expect(parseTypedCommand('/')).toBeUndefined();
  });

  it('keeps the raw text for quoting rules and names the console chat and admin', () => {
    expect(toCommand('reject r1 "too risky"', 'web:cmd:k')).toMatchObject({
      rawText: 'reject r1 "too risky"',
      chatRef: 'web:console',
      user: { platform: 'web', id: 'admin' },
      idempotencyKey: 'web:cmd:k',
    });
  });

  it('refuses empty, too long or badly keyed bodies, naming the field', () => {
    expect(() => parseBody(commandBody, { text: '  ' })).toThrow(/invalid text/);
    expect(() => parseBody(commandBody, { text: 'x'.repeat(4001) })).toThrow(/invalid text/);
    expect(() => parseBody(commandBody, { text: 'ok', key: 'a b' })).toThrow(/invalid key/);
    expect(parseBody(commandBody, { text: ' ok ' })).toEqual({ text: 'ok' });
  });
});

describe('interaction handles', () => {
  it('round-trip, and foreign handles are INVALID_INPUT', () => {
    const data = { s: 'sess', t: 'tab-1', m: 'web:console#b.1' };
    expect(decodeInteraction(encodeInteraction(data))).toEqual(data);
    expect(() => decodeInteraction({ platform: 'telegram', handle: JSON.stringify(data) })).toThrow(
      /not a web console interaction/,
    );
    expect(() => decodeInteraction({ platform: 'web', handle: '{' })).toThrow();
  });
});
