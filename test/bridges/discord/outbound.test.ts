/**
 * Pure rendering for Discord: markdown escaping, embeds and their limits, splitting, buttons, the
 * reason modal, and the chat/message refs.
 */
import { describe, expect, it } from 'vitest';
import { formatChatRef, parseChatRef } from '../../../src/bridges/discord/index.ts';
import {
  actionRows,
  escapeMarkdown,
  keptPrompt,
  keptPromptValue,
  reasonModal,
  renderFields,
  renderMarkdown,
  renderMessage,
} from '../../../src/bridges/discord/outbound.ts';
import { formatMessageRef, parseMessageRef, targetOf } from '../../../src/bridges/discord/refs.ts';
import { bold, code, link, plain, rich } from '../../../src/bridges/render-text.ts';
import { hasCode } from '../../../src/errors.ts';

const refuses = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return hasCode(err, 'INVALID_INPUT');
  }
  return false;
};

describe('markdown', () => {
  it('escapes what Discord would format, but leaves bare URLs clickable', () => {
    expect(escapeMarkdown('*bold* _it_ ~~s~~ `c` ||spoiler|| <@123> [x](y) # h')).toBe(
      '\\*bold\\* \\_it\\_ \\~\\~s\\~\\~ \\`c\\` \\|\\|spoiler\\|\\| \\<@123\\> \\[x\\]\\(y\\) \\# h',
    );
    expect(escapeMarkdown('- item\n1. first\n> quote')).toBe('\\- item\n1\\. first\n\\> quote');
    expect(escapeMarkdown('see https://example.com/a_b_c now')).toBe(
      'see https://example.com/a_b_c now',
    );
  });

  it('renders bold, inline and block code, and only safe links', () => {
    expect(renderMarkdown(rich(bold('a*b'), ' ', code('x`y'), ' ', code('l1\nl2')))).toBe(
      '**a\\*b** `` x`y `` ```\nl1\nl2\n```',
    );
    expect(renderMarkdown([link('docs', 'https://e.com/a)b')])).toBe('[docs](https://e.com/a%29b)');
    expect(renderMarkdown([link('click', 'javascript:alert(1)')])).toBe('click');
    expect(renderMarkdown([plain('')])).toBe('');
  });
});

describe('renderMessage', () => {
  it('keeps every part within 4096 markdown characters even when escaping doubles the text', () => {
    const parts = renderMessage({ text: rich('*'.repeat(5000)) });
    expect(parts.length).toBeGreaterThan(2);
    for (const p of parts) expect(String(p.embed.description).length).toBeLessThanOrEqual(4096);
    const visible = parts.map((p) => String(p.embed.description).replace(/\\/g, '')).join('');
    expect(visible).toBe('*'.repeat(5000));
  });

  it('caps an edit to the parts that exist, marking what was cut', () => {
    const parts = renderMessage({ text: rich('x '.repeat(5000)) }, 1);
    expect(parts).toHaveLength(1);
    expect(String(parts[0]!.embed.description)).toMatch(/more characters not shown\\\)$/);
  });

  it('puts fields on the last part, within their limits', () => {
    const fields = renderFields([
      { label: 'Run', value: 'r'.repeat(2000) },
      { label: 'Phase', value: 'B' },
    ]);
    expect(fields[0]!.value.length).toBeLessThanOrEqual(1024);
    expect(fields.reduce((n, f) => n + f.name.length + f.value.length, 0)).toBeLessThanOrEqual(
      1900,
    );
    const parts = renderMessage({ text: rich('hi'), fields: [{ label: 'Phase', value: 'B' }] });
    expect(parts[0]!.embed).toEqual({
      description: 'hi',
      fields: [{ name: 'Phase', value: 'B', inline: true }],
    });
  });

  it('refuses empty text, too many buttons, and button ids Discord or the adapter would reject', () => {
    expect(refuses(() => renderMessage({ text: rich('  ') }))).toBe(true);
    const many = Array.from({ length: 26 }, (_, i) => ({ id: `b${i}`, label: `B${i}` }));
    expect(refuses(() => actionRows(many))).toBe(true);
    expect(refuses(() => actionRows([{ id: 'x'.repeat(101), label: 'X' }]))).toBe(true);
    expect(refuses(() => actionRows([{ id: 'pb:reason:1', label: 'X' }]))).toBe(true);
    expect(refuses(() => actionRows([{ id: 'ok', label: ' ' }]))).toBe(true);
    expect(actionRows(many.slice(0, 12)).map((r) => r.components.length)).toEqual([5, 5, 2]);
  });
});

describe('reason modal', () => {
  it('shows the notes and the prompt, escaped, above one required paragraph input', () => {
    const modal = reasonModal('42', 'Why *reject*?', ['Rejecting cp-1']);
    expect(modal.custom_id).toBe('pb:reason:42');
    expect(modal.title.length).toBeLessThanOrEqual(45);
    expect(modal.components[0]).toMatchObject({
      type: 10,
      content: 'Rejecting cp-1\n\nWhy \\*reject\\*?',
    });
    expect(modal.components[1]).toMatchObject({
      type: 18,
      component: { type: 4, custom_id: 'reason', style: 2, required: true },
    });
  });

  it('an approval’s comment modal is titled so and may be sent empty, also from the fallback button', () => {
    const ask = { title: 'Approve with comment', label: 'Comment', optional: true } as const;
    // The fallback button reopens the modal from what was kept: the same title and optional field.
    const kept = keptPrompt(keptPromptValue('Your comment?', ask));
    const modal = reasonModal('42', kept.prompt, [], kept.ask);
    expect(modal.title).toBe('Approve with comment');
    expect(modal.components[1]).toMatchObject({
      label: 'Comment',
      component: { custom_id: 'reason', required: false },
    });
    expect(modal.components[1]).not.toHaveProperty('component.min_length');
    // A prompt kept by an earlier release (plain text) still opens the reason modal.
    expect(keptPrompt('Why?')).toEqual({ prompt: 'Why?', ask: {} });
  });
});

describe('refs', () => {
  it('round-trips chat refs of channels, threads and DMs', () => {
    for (const ref of ['discord:1:2', 'discord:1:2:3', 'discord:@me:9']) {
      expect(formatChatRef(parseChatRef(ref))).toBe(ref);
    }
    expect(parseChatRef('discord:1:2:3')).toEqual({ guild: '1', channel: '2', thread: '3' });
    for (const bad of ['discord:1', 'discord:x:2', 'telegram:1:2', 'discord:1:2:3:4']) {
      expect(refuses(() => parseChatRef(bad))).toBe(true);
    }
  });

  it('lets a message thread override the chat ref, and round-trips message refs', () => {
    expect(targetOf('discord:1:2', '7')).toEqual({ guild: '1', channel: '2', thread: '7' });
    expect(refuses(() => targetOf('discord:1:2', 'abc'))).toBe(true);
    const ref = formatMessageRef({ guild: '1', channel: '2', thread: '3' }, ['10', '11']);
    expect(ref).toBe('discord:1:2:3/10,11');
    expect(parseMessageRef(ref)).toEqual({
      place: { guild: '1', channel: '2', thread: '3' },
      messageIds: ['10', '11'],
    });
    expect(refuses(() => parseMessageRef('discord:1:2/reason:5'))).toBe(true);
  });
});
