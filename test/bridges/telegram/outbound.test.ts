import { GrammyError } from 'grammy';
import { describe, expect, it } from 'vitest';
import { withRateLimitRetry } from '../../../src/bridges/delivery.ts';
import { parseChatRef as parseNeutralChatRef } from '../../../src/bridges/refs.ts';
import { bold, code, link, plainTextOf, rich } from '../../../src/bridges/render-text.ts';
import { toTelegramError } from '../../../src/bridges/telegram/errors.ts';
import {
  callbackAnswerText,
  formatChatRef,
  formatMessageRef,
  inlineKeyboard,
  parseChatRef,
  parseMessageRef,
  renderHtml,
  renderMessage,
} from '../../../src/bridges/telegram/outbound.ts';
import { ChatUnreachableError, InvalidInputError, RateLimitedError } from '../../../src/errors.ts';
import { parseTelegramHtml } from '../../fakes/telegram.ts';

const apiError = (code: number, description: string, retryAfter?: number) =>
  new GrammyError(
    `Call to 'sendMessage' failed! (${code}: ${description})`,
    {
      ok: false,
      error_code: code,
      description,
      ...(retryAfter !== undefined && { parameters: { retry_after: retryAfter } }),
    },
    'sendMessage',
    {},
  );

describe('Telegram rendering', () => {
  it('escapes user text and renders bold, code, blocks and links', () => {
    const html = renderHtml(
      rich(
        bold('<b>x</b>'),
        ' & ',
        code('a<b'),
        code('1\n2'),
        link('l', 'https://e.test/?q="1"&r'),
      ),
    );
    expect(html).toBe(
      '<b>&lt;b&gt;x&lt;/b&gt;</b> &amp; <code>a&lt;b</code><pre>1\n2</pre><a href="https://e.test/?q=&quot;1&quot;&amp;r">l</a>',
    );
    expect(parseTelegramHtml(html)).toBe('<b>x</b> & a<b1\n2l');
  });

  it('shows a javascript: or malformed link as plain text', () => {
    expect(renderHtml(rich(link('click', 'javascript:alert(1)'), link('x', 'not a url')))).toBe(
      'clickx',
    );
  });

  it('lays buttons out three to a row with their styles', () => {
    const kb = inlineKeyboard(
      ['a', 'b', 'c', 'd'].map((id, i) => ({
        id,
        label: id.toUpperCase(),
        style: i === 0 ? 'primary' : 'default',
      })),
    );
    expect(kb.inline_keyboard.map((row) => row.length)).toEqual([3, 1]);
    expect(kb.inline_keyboard[0]![0]).toEqual({ text: 'A', callback_data: 'a', style: 'primary' });
    expect(kb.inline_keyboard[0]![1]).toEqual({ text: 'B', callback_data: 'b' });
  });

  it('accepts a 64-byte token and refuses 65 bytes or an empty one', () => {
    expect(() => inlineKeyboard([{ id: 'é'.repeat(32), label: 'ok' }])).not.toThrow();
    expect(() => inlineKeyboard([{ id: `${'é'.repeat(32)}x`, label: 'no' }])).toThrow(
      InvalidInputError,
    );
    expect(() => inlineKeyboard([{ id: '', label: 'no' }])).toThrow(InvalidInputError);
  });

  it('splits a long message into valid parts of at most 4096 visible characters', () => {
    const text = rich('<&>'.repeat(4000));
    const parts = renderMessage({ text, buttons: [{ id: 't', label: 'Go' }] });
    const visible = parts.map((p) => parseTelegramHtml(p.html));
    expect(visible.join('')).toBe(plainTextOf(text));
    expect(visible.every((v) => v.length <= 4096)).toBe(true);
    expect(parts.map((p) => p.keyboard !== undefined)).toEqual([false, false, true]);
  });

  it('refuses an empty message', () => {
    expect(() => renderMessage({ text: rich('  ') })).toThrow(InvalidInputError);
  });

  it('shortens a callback answer to 200 characters', () => {
    expect([...callbackAnswerText('😀'.repeat(300))]).toHaveLength(200);
    expect(callbackAnswerText('short')).toBe('short');
  });
});

describe('Telegram refs', () => {
  it('round-trips chat and message refs, topics included', () => {
    const chat = { chatId: -1001234567890, topic: 42 };
    expect(formatChatRef(chat)).toBe('telegram:-1001234567890:42');
    expect(parseChatRef('telegram:-1001234567890:42')).toEqual(chat);
    expect(parseMessageRef(formatMessageRef(chat, [7, 8]))).toEqual({ chat, messageIds: [7, 8] });
  });

  it('makes chat refs the shared ref parser understands', () => {
    expect(parseNeutralChatRef(formatChatRef({ chatId: -100123, topic: 9 }))).toEqual({
      platform: 'telegram',
      chat: 'telegram:-100123',
      thread: '9',
    });
  });

  it('refuses refs of other shapes', () => {
    for (const bad of ['slack:T:C', 'telegram:@chan', 'telegram:1:2:3', 'telegram:', 'x']) {
      expect(() => parseChatRef(bad)).toThrow(InvalidInputError);
    }
    for (const bad of ['telegram:1', 'telegram:1/', 'telegram:1/a', 'telegram:1/2,,3']) {
      expect(() => parseMessageRef(bad)).toThrow(InvalidInputError);
    }
  });
});

describe('rate limits of the Bot API (shared retry loop, Telegram errors)', () => {
  it('waits retry_after and retries until the call succeeds', async () => {
    const waits: number[] = [];
    let calls = 0;
    const result = await withRateLimitRetry(
      async () => {
        calls += 1;
        if (calls < 3) throw apiError(429, 'Too Many Requests: retry after 3', 3);
        return 'sent';
      },
      {
        toError: toTelegramError,
        policy: { maxRetries: 5, maxWaitMs: 10_000 },
        wait: async (ms) => void waits.push(ms),
      },
    );
    expect(result).toBe('sent');
    expect(waits).toEqual([3000, 3000]);
  });

  it('gives up with RateLimitedError past the policy, and never retries other errors', async () => {
    const noWait = async () => {};
    const always429 = async () => {
      throw apiError(429, 'Too Many Requests', 1);
    };
    const err = await withRateLimitRetry(always429, {
      toError: toTelegramError,
      policy: { maxRetries: 2, maxWaitMs: 5000 },
      wait: noWait,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(1000);

    let calls = 0;
    const forbidden = async () => {
      calls += 1;
      throw apiError(403, 'Forbidden: bot was blocked by the user');
    };
    await expect(
      withRateLimitRetry(forbidden, { toError: toTelegramError, wait: noWait }),
    ).rejects.toBeInstanceOf(ChatUnreachableError);
    expect(calls).toBe(1);
  });
});
