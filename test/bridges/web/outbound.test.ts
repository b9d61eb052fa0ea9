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

describe('links into the console', () => {
  const id = '2026-11-30T153000Z-add-a-login';
  it('links run ids to their page and log paths to the log page, not the server path', () => {
    const html = renderMessageHtml({
      text: rich(`Checkpoint plan:1 — run ${id}`),
      fields: [{ label: 'Logs', value: `/srv/ws/.phasebridge/runs/${id}/logs/plan-2.log` }],
    });
    expect(html).toContain(`run <a href="/runs/${id}">${id}</a>`);
    expect(html).toContain(
      `<dd><a href="/runs/${id}/logs/plan?attempt=2" title="/srv/ws/.phasebridge/runs/${id}/logs/plan-2.log">plan log (attempt 2)</a></dd>`,
    );
  });

  it('links the CLI command a checkpoint names for its log to the log page', () => {
    const html = renderMessageHtml({
      text: rich(`Checkpoint plan:1 — run ${id}`),
      fields: [{ label: 'Logs', value: `phasebridge logs ${id} plan --attempt 2` }],
    });
    expect(html).toContain(
      `<dd><a href="/runs/${id}/logs/plan?attempt=2">plan log (attempt 2)</a></dd>`,
    );
  });

  it('keeps a bold title as it was and links its run id after the message, once', () => {
    const html = renderMessageHtml({
      text: rich(bold(`Run ${id}`), ' · Demo\nRunning step 1 of 3'),
    });
    expect(html).toContain(`<strong>Run ${id}</strong> · Demo`);
    expect(html.match(new RegExp(`href="/runs/${id}"`, 'g'))).toHaveLength(1);
    expect(html).toContain(`aria-label="Open the page of run ${id}">Open the run page</a>`);
    const both = renderMessageHtml({ text: rich(bold(`Run ${id}`), ` is ${id}`) });
    expect(both.match(/<a /g)).toHaveLength(1);
  });

  it('leaves look-alikes, ids inside words and escaped markup alone', () => {
    const text = `x${id} ${id}x/ &lt;${id}&gt; 2026-11-30T1530Z-short`;
    const html = renderMessageHtml({ text: rich(text) });
    // Only the id between &lt; and &gt; stands alone: it is linked; the others are not.
    expect(html.match(/<a /g)).toHaveLength(1);
    expect(html).toContain(`&amp;lt;<a href="/runs/${id}">`);
  });
});
