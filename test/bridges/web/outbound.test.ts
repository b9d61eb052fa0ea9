/** Rendering console messages: everything escaped, links only when safe. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bold, code, link, rich } from '../../../src/bridges/render-text.ts';
import {
  assertMessageRef,
  escapeHtml,
  renderMessageHtml,
  renderRichHtml,
  safeHref,
} from '../../../src/bridges/web/outbound.ts';

describe('rendering', () => {
  it('escapes text in every kind of segment, field and button', () => {
    const html = renderMessageHtml({
      text: rich('<a>', bold('"b"'), code("x'y"), link('<l>', 'https://e.test/?a=1&b=2')),
      fields: [{ label: '<k>', value: '<v>' }],
      buttons: [{ id: 'id"><script>', label: '<Approve>', style: 'primary' }],
    });
    expect(html).toContain('&lt;a&gt;<strong>&quot;b&quot;</strong><code>x&#39;y</code>');
    expect(html).toContain('href="https://e.test/?a=1&amp;b=2"');
    expect(html).toContain('<dt>&lt;k&gt;</dt><dd>&lt;v&gt;</dd>');
    expect(html).toContain('data-token="id&quot;&gt;&lt;script&gt;"');
    expect(html).toContain('>&lt;Approve&gt;</button>');
    expect(html).not.toMatch(/<script|<k>|<v>/);
  });

  it('never lets text open a tag (property)', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        const html = renderRichHtml(rich(a, bold(b), code(a), link(b, b)));
        const tags = html.match(/<\/?[a-z]+/g) ?? [];
        return tags.every((t) => /^<\/?(strong|code|pre|a)$/.test(t));
      }),
    );
    fc.assert(fc.property(fc.string(), (s) => !/[<>"']/.test(escapeHtml(s))));
  });

  it('renders javascript: links as text and multi-line code as a block', () => {
    expect(safeHref('javascript:alert(1)')).toBeUndefined();
    expect(safeHref('//evil.test/x')).toBeUndefined();
    expect(safeHref('/files/abc')).toBe('/files/abc');
    expect(renderRichHtml([link('click', 'javascript:alert(1)')])).toBe('click');
    expect(renderRichHtml([code('a\nb')])).toBe('<pre><code>a\nb</code></pre>');
  });

  it('cuts very long text with a marker instead of failing', () => {
    const html = renderMessageHtml({ text: rich('x'.repeat(70_000)) });
    expect(html).toMatch(/more characters not shown/);
  });

  it('accepts only console message refs', () => {
    expect(assertMessageRef('web:console#abc_-1.12')).toBe('web:console#abc_-1.12');
    for (const bad of ['telegram:1:2', 'web:console#a.b', 'web:console#"x.1']) {
      expect(() => assertMessageRef(bad)).toThrow(/not a web console message ref/);
    }
  });
});
