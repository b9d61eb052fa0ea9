/**
 * Draws a captured bot message the way each platform's client lays it out (a plain likeness: the
 * fonts, colours and button shapes of each, not a pixel copy), as one self-contained HTML page.
 * The input is what the platform stored, so the picture shows what the bridge really sent.
 */
import type { Captured } from './capture.ts';

const esc = (s: string): string =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A mention (`<@U123>` on Slack, `<@123>` on Discord) drawn as the client does: @name. */
function mentions(escaped: string, people: Readonly<Record<string, string>>): string {
  return escaped.replace(/&lt;@!?(\w+)&gt;/g, (_, id: string) => {
    const name = people[id] ?? id;
    return `<span class="mention">@${esc(name.replace(/^@/, ''))}</span>`;
  });
}

/** Code fences first (their inside stays literal), then the inline marks of one dialect. */
function markdown(
  text: string,
  inline: (escaped: string) => string,
  people: Readonly<Record<string, string>> = {},
): string {
  return text
    .split(/```\n?/)
    .map((part, i) =>
      i % 2 === 1
        ? `<pre>${esc(part.replace(/\n$/, ''))}</pre>`
        : mentions(inline(esc(part)), people),
    )
    .join('');
}

const slackInline = (s: string): string =>
  s
    .replace(/&lt;(https?:[^|&]+)\|([^&]+)&gt;/g, '<a href="$1">$2</a>')
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*([^*\n]+)\*/g, '<b>$1</b>')
    .replace(/(^|\s)_([^_\n]+)_/g, '$1<i>$2</i>');

const discordInline = (s: string): string =>
  s
    .replace(/\[([^\]]+)\]\((https?:[^)]+)\)/g, '<a href="$2">$1</a>')
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<b>$1</b>');

/** The fields of a Slack block this page draws. */
interface SlackBlock {
  type: string;
  text?: { text: string };
  fields?: { text: string }[];
  elements?: { text?: string | { text: string }; style?: string }[];
}

const BUTTON_CLASS: Record<string, string> = { primary: 'primary', danger: 'danger' };
const DISCORD_STYLE: Record<number, string> = { 1: 'primary', 3: 'success', 4: 'danger' };

function telegram(m: Extract<Captured, { platform: 'telegram' }>): string {
  const rows = m.keyboard
    .map((row) => `<div class="kb">${row.map((b) => `<span>${esc(b.text)}</span>`).join('')}</div>`)
    .join('');
  // The bot sends Telegram's HTML subset (b, i, code, pre, a), drawn as it is.
  return `<div class="tg"><div class="bubble"><div class="who">phasebridge</div><div class="body">${m.html}</div></div>${rows}</div>`;
}

function slack(m: Extract<Captured, { platform: 'slack' }>): string {
  const blocks = (m.blocks as SlackBlock[]).map((b) => {
    if (b.type === 'section' && b.text)
      return `<div class="sec">${markdown(b.text.text, slackInline, m.people)}</div>`;
    if (b.type === 'section' && b.fields) {
      const fields = (b.fields as { text: string }[])
        .map((f) => `<div>${markdown(f.text, slackInline, m.people)}</div>`)
        .join('');
      return `<div class="fields">${fields}</div>`;
    }
    if (b.type === 'context') {
      const parts = (b.elements as { text?: string }[]).map((e) =>
        markdown(e.text ?? '', slackInline, m.people),
      );
      return `<div class="ctx">${parts.join(' ')}</div>`;
    }
    if (b.type === 'actions') {
      const buttons = (b.elements as { text: { text: string }; style?: string }[])
        .map((e) => `<span class="${BUTTON_CLASS[e.style ?? ''] ?? ''}">${esc(e.text.text)}</span>`)
        .join('');
      return `<div class="actions">${buttons}</div>`;
    }
    return '';
  });
  return `<div class="sl"><div class="avatar">pb</div><div><div class="who">phasebridge <em>APP</em></div>${blocks.join('')}</div></div>`;
}

function discord(m: Extract<Captured, { platform: 'discord' }>): string {
  const embeds = (
    m.embeds as {
      description?: string;
      fields?: { name: string; value: string; inline?: boolean }[];
    }[]
  )
    .map((e) => {
      const fields = (e.fields ?? [])
        .map(
          (f) =>
            `<div class="${f.inline ? 'inline' : 'wide'}"><b>${esc(f.name)}</b><div>${markdown(f.value, discordInline, m.people)}</div></div>`,
        )
        .join('');
      return `<div class="embed">${markdown(e.description ?? '', discordInline, m.people)}<div class="dfields">${fields}</div></div>`;
    })
    .join('');
  const rows = (m.components as { components?: { label?: string; style?: number }[] }[])
    .map(
      (row) =>
        `<div class="actions">${(row.components ?? []).map((b) => `<span class="${DISCORD_STYLE[b.style ?? 2] ?? ''}">${esc(String(b.label))}</span>`).join('')}</div>`,
    )
    .join('');
  const content = m.content ? `<div>${markdown(m.content, discordInline, m.people)}</div>` : '';
  return `<div class="dc"><div class="avatar">pb</div><div><div class="who">phasebridge <em>APP</em></div>${content}${embeds}${rows}</div></div>`;
}

const STYLE = `
body{margin:0;padding:16px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
pre{white-space:pre-wrap;word-break:break-word;font:12px/1.4 ui-monospace,monospace;padding:6px 8px;border-radius:4px;margin:6px 0}
code{font:12px ui-monospace,monospace;padding:1px 3px;border-radius:3px}
.body,.sec,.embed{white-space:pre-wrap;word-break:break-word}
.who{font-weight:700;margin-bottom:2px}.who em{font-style:normal;font-size:10px;padding:0 4px;border-radius:3px;vertical-align:2px}
.tg{background:#9bbbd4;padding:12px;border-radius:8px;max-width:520px}
.tg .bubble{background:#fff;border-radius:12px;padding:8px 12px}.tg .who{color:#2481cc}
.tg pre{background:#f1f4f7}.tg .kb{display:flex;gap:4px;margin-top:4px}
.tg .kb span{flex:1;text-align:center;background:rgba(0,0,0,.25);color:#fff;border-radius:8px;padding:8px 4px;font-weight:600}
.sl{display:flex;gap:8px;background:#fff;color:#1d1c1d;max-width:560px}
.sl .avatar,.dc .avatar{flex:none;width:36px;height:36px;border-radius:6px;background:#4a154b;color:#fff;display:grid;place-items:center;font-weight:700}
.sl .who em{background:#e8e8e8;color:#616061}.sl pre{background:#f8f8f8;border:1px solid #ddd}
.sl .fields{display:grid;grid-template-columns:1fr 1fr;gap:8px;margin:8px 0;white-space:pre-wrap}
.sl .ctx{color:#616061;font-size:12px}
.mention{border-radius:3px;padding:0 2px}.sl .mention{background:#e8f5fa;color:#1264a3}.dc .mention{background:rgba(88,101,242,.3);color:#c9cdfb}
.actions{display:flex;gap:8px;margin-top:8px;flex-wrap:wrap}
.sl .actions span{border:1px solid #bbb;border-radius:4px;padding:4px 12px;font-weight:700}
.sl .actions .primary{background:#007a5a;color:#fff;border-color:#007a5a}.sl .actions .danger{color:#e01e5a;border-color:#e01e5a}
.dc{display:flex;gap:12px;background:#313338;color:#dbdee1;padding:16px;max-width:560px}
.dc .avatar{border-radius:50%;background:#5865f2}.dc .who{color:#f2f3f5}.dc .who em{background:#5865f2;color:#fff}
.dc .embed{background:#2b2d31;border-left:4px solid #5865f2;border-radius:4px;padding:8px 12px;margin-top:4px}
.dc pre{background:#1e1f22;border:1px solid #1e1f22}.dc code{background:#1e1f22}
.dc .dfields{display:grid;grid-template-columns:repeat(3,1fr);gap:8px;margin-top:8px;white-space:normal}
.dc .dfields .wide{grid-column:1/-1}
.dc .actions span{background:#4e5058;color:#fff;border-radius:3px;padding:4px 14px;font-weight:500}
.dc .actions .primary{background:#5865f2}.dc .actions .success{background:#248046}.dc .actions .danger{background:#da373c}
`;

/** A whole page drawing `m` as its platform's client would. */
export function renderPage(m: Captured): string {
  const body =
    m.platform === 'telegram' ? telegram(m) : m.platform === 'slack' ? slack(m) : discord(m);
  return `<!doctype html><html><head><meta charset="utf-8"><style>${STYLE}</style></head><body><div id="shot">${body}</div></body></html>`;
}
