/** Pure rendering and refs of the Slack adapter: mrkdwn escaping, Block Kit limits, splitting. */
import { describe, expect, it } from 'vitest';
import { bold, code, link, plainTextOf, rich } from '../../../src/bridges/render-text.ts';
import {
  buttonBlocks,
  formatChatRef,
  formatMessageRef,
  MAX_BLOCKS_TEXT,
  MAX_SECTION_TEXT,
  MAX_TEXT_LENGTH,
  parseChatRef,
  parseMessageRef,
  reasonModal,
  renderMessage,
  renderMrkdwn,
  renderSections,
} from '../../../src/bridges/slack/outbound.ts';
import { hasCode } from '../../../src/errors.ts';

describe('Slack refs', () => {
  it('round-trips chat and message refs, with and without a thread', () => {
    for (const ref of ['slack:T01:C02', 'slack:T01:C02:1700000000.000100']) {
      expect(formatChatRef(parseChatRef(ref))).toBe(ref);
    }
    const chat = parseChatRef('slack:T01:C02:1700000000.000100');
    const ref = formatMessageRef(chat, ['1700000001.000001', '1700000001.000002']);
    expect(parseMessageRef(ref)).toEqual({ chat, ts: ['1700000001.000001', '1700000001.000002'] });
  });

  it('refuses malformed refs and prompt/file refs as messages', () => {
    for (const bad of ['slack:T01', 'slack:#ops:C1', 'telegram:1', 'slack:T1:C1:abc']) {
      expect(() => parseChatRef(bad)).toThrow(/not a Slack chat ref/);
    }
    for (const bad of ['slack:T1:C1', 'slack:T1:C1/', 'slack:T1:C1/12', 'slack:T1:C1/view:V1']) {
      let err: unknown;
      try {
        parseMessageRef(bad);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'INVALID_INPUT')).toBe(true);
    }
  });
});

describe('renderMrkdwn', () => {
  it('escapes &, < and > everywhere so mentions and links cannot be injected', () => {
    expect(renderMrkdwn(rich('<!channel> & <https://evil|click> ', bold('<@U1>')))).toBe(
      '&lt;!channel&gt; &amp; &lt;https://evil|click&gt; *&lt;@U1&gt;*',
    );
  });

  it('keeps markers hugging text, and code intact', () => {
    expect(renderMrkdwn(rich(bold('Run: '), 'x'))).toBe('*Run:* x');
    expect(renderMrkdwn(rich(bold('  '), 'x'))).toBe('  x');
    expect(renderMrkdwn(rich(code('a`b')))).toBe('`aˋb`');
    expect(renderMrkdwn(rich(code('line 1\nline <2>')))).toBe('```\nline 1\nline &lt;2&gt;\n```');
  });

  it('links http(s) URLs only, with | and > made harmless', () => {
    expect(renderMrkdwn(rich(link('log', 'https://x.test/a?b=1&c=|>')))).toBe(
      '<https://x.test/a?b=1&amp;c=%7C&gt;|log>',
    );
    expect(renderMrkdwn(rich(link('x', 'javascript:alert(1)')))).toBe('x');
    expect(renderMrkdwn(rich(link('y', 'not a url')))).toBe('y');
  });
});

describe('renderMessage', () => {
  it('renders text, fields and buttons as section, fields section and actions blocks', () => {
    const [part, ...rest] = renderMessage({
      text: rich('Phase ', bold('B')),
      fields: [
        { label: 'Run', value: 'r-1' },
        { label: 'Step', value: '<build>' },
      ],
      buttons: [
        { id: 'a', label: 'Approve', style: 'primary' },
        { id: 'b', label: 'Details', style: 'default' },
      ],
    });
    expect(rest).toEqual([]);
    expect(part!.text).toBe('Phase B');
    expect(part!.blocks).toEqual([
      { type: 'section', text: { type: 'mrkdwn', text: 'Phase *B*' } },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*Run*\nr-1' },
          { type: 'mrkdwn', text: '*Step*\n&lt;build&gt;' },
        ],
      },
      {
        type: 'actions',
        elements: [
          {
            type: 'button',
            action_id: 'a',
            text: { type: 'plain_text', text: 'Approve', emoji: true },
            style: 'primary',
          },
          {
            type: 'button',
            action_id: 'b',
            text: { type: 'plain_text', text: 'Details', emoji: true },
          },
        ],
      },
    ]);
  });

  it('refuses empty text and button ids Slack would reject', () => {
    expect(() => renderMessage({ text: rich('  ') })).toThrow(/empty/);
    expect(() => buttonBlocks([{ id: 'x'.repeat(256), label: 'L' }])).toThrow(/1-255/);
    expect(() => buttonBlocks([{ id: '', label: 'L' }])).toThrow(/1-255/);
    expect(() =>
      buttonBlocks([
        { id: 'same', label: 'A' },
        { id: 'same', label: 'B' },
      ]),
    ).toThrow(/duplicate/);
    expect(() => buttonBlocks([{ id: 'k', label: ' ' }])).toThrow(/label/);
    const long = buttonBlocks([{ id: 'k', label: 'L'.repeat(100) }]);
    expect(
      (long[0] as { elements: { text: { text: string } }[] }).elements[0]!.text.text,
    ).toHaveLength(75);
  });

  it('splits long text into messages and sections that fit after escaping', () => {
    const text = rich('&'.repeat(MAX_TEXT_LENGTH + 10));
    const parts = renderMessage({ text, buttons: [{ id: 'k', label: 'Go' }] });
    // Each `&` is five characters escaped: the first 6000 are 30 000 of mrkdwn, three messages
    // of at most 12 000; the last 10 a fourth.
    expect(parts).toHaveLength(4);
    for (const part of parts) {
      let total = 0;
      for (const block of part.blocks) {
        if (block.type === 'section' && block.text) {
          expect(block.text.text.length).toBeLessThanOrEqual(MAX_SECTION_TEXT);
          total += block.text.text.length;
        }
      }
      expect(total).toBeLessThanOrEqual(MAX_BLOCKS_TEXT);
    }
    expect(parts.slice(0, -1).some((p) => p.blocks.some((b) => b.type === 'actions'))).toBe(false);
    expect(parts.at(-1)!.blocks.at(-1)!.type).toBe('actions');
    const sections = renderSections(text);
    expect(sections.join('').replace(/&amp;/g, '&')).toBe(plainTextOf(text));
  });

  it('cuts an edit to the number of messages sent, saying how much was left out', () => {
    const parts = renderMessage({ text: rich('x '.repeat(MAX_TEXT_LENGTH)) }, 1);
    expect(parts).toHaveLength(1);
    expect(parts[0]!.blocks.at(-1)!).toMatchObject({ type: 'section' });
    expect(JSON.stringify(parts[0]!.blocks)).toMatch(/more characters not shown/);
  });
});

describe('reasonModal', () => {
  it('is a modal with the prompt as plain text and one multiline input', () => {
    const view = reasonModal('Why <reject>?', '{"chat":"slack:T1:C1"}');
    expect(view).toMatchObject({
      type: 'modal',
      callback_id: 'phasebridge_reason',
      private_metadata: '{"chat":"slack:T1:C1"}',
      blocks: [
        { type: 'section', text: { type: 'plain_text', text: 'Why <reject>?' } },
        { type: 'input', element: { type: 'plain_text_input', multiline: true } },
      ],
    });
    expect(reasonModal('   ', '{}').blocks[0]).toMatchObject({ text: { text: 'Why?' } });
  });
});
