/**
 * Outbound side of the web console: neutral messages rendered to escaped HTML fragments (pure),
 * and the console's message refs. Every piece of text is escaped here; nothing else in the
 * console builds message markup.
 */
import { InvalidInputError } from '../../errors.ts';
import type { MessageRef, OutgoingMessage, RichSegment, RichText } from '../messages.ts';
import { splitRichTextInto } from '../render-text.ts';

/** The one chat of the console: every browser session shares it (see index.ts). */
export const CONSOLE_CHAT_REF = 'web:console';

/** Longest text one console message shows; longer text is cut with a marker. */
export const MAX_WEB_TEXT_LENGTH = 64_000;

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** The URL when it is http(s) (or a site-relative path); javascript: and the like are refused. */
export function safeHref(url: string): string | undefined {
  if (url.startsWith('/') && !url.startsWith('//')) return url;
  try {
    const { protocol } = new URL(url);
    return protocol === 'http:' || protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A run id (`2026-11-29T143000Z-add-login`) not inside a path or a longer word. */
const RUN_ID = /(?<![\w/.-])(\d{4}-\d\d-\d\dT\d{6}Z-[a-z0-9-]+)(?![\w/-])/g;
/** A step log's path on the server: `…/.phasebridge/runs/<run>/logs/<step>-<attempt>.log`. */
const LOG_PATH =
  /(?<![\w])\S*\/\.phasebridge\/runs\/(\d{4}-\d\d-\d\dT\d{6}Z-[a-z0-9-]+)\/logs\/([A-Za-z0-9._:-]+)-(\d+)\.log/g;

/** The CLI command a checkpoint names for a step log: `phasebridge logs <run> <step> --attempt N`. */
const LOG_COMMAND =
  /phasebridge logs (\d{4}-\d\d-\d\dT\d{6}Z-[a-z0-9-]+) ([A-Za-z0-9._:-]+) --attempt (\d+)/g;

/**
 * Links escaped text into the console's pages: a step log's server path (older messages) or the
 * CLI command printing it becomes a link to its log page (named `<step> log`; a path stays in
 * the title), a run id a link to its run page. Ids, paths and commands contain no
 * character escaping changes, so matching escaped text is safe.
 */
export function linkRuns(escaped: string): string {
  const href = (run: string, step: string, n: string) =>
    `/runs/${run}/logs/${encodeURIComponent(step)}?attempt=${n}`;
  const logsLinked = escaped
    .replace(
      LOG_PATH,
      (path, run: string, step: string, n: string) =>
        `<a href="${href(run, step, n)}" title="${path}">${step} log (attempt ${n})</a>`,
    )
    // No title: the run id in it would be linked below, inside the attribute.
    .replace(
      LOG_COMMAND,
      (_cmd, run: string, step: string, n: string) =>
        `<a href="${href(run, step, n)}">${step} log (attempt ${n})</a>`,
    );
  return logsLinked.replace(RUN_ID, (id: string) => `<a href="/runs/${id}">${id}</a>`);
}

function renderSegment(seg: RichSegment): string {
  const text = escapeHtml(seg.text);
  switch (seg.kind) {
    case 'plain':
      return linkRuns(text);
    // Bold and code keep their markup as it was (`<strong>Run …</strong>` titles); their run ids
    // get a link after the message instead (runPageLinks).
    case 'bold':
      return `<strong>${text}</strong>`;
    case 'code':
      return seg.text.includes('\n') ? `<pre><code>${text}</code></pre>` : `<code>${text}</code>`;
    case 'link': {
      const href = safeHref(seg.url);
      return href === undefined
        ? text
        : `<a href="${escapeHtml(href)}" rel="noopener noreferrer" target="_blank">${text}</a>`;
    }
    case 'mention':
      return text;
  }
}

/** Rich text as escaped HTML (newlines are kept by the page's `white-space: pre-wrap`). */
export function renderRichHtml(text: RichText): string {
  return text.map(renderSegment).join('');
}

/** Links to the run pages of run ids that only bold or code text names. */
function runPageLinks(text: RichText, rendered: string): string {
  const ids = new Set<string>();
  for (const seg of text) {
    if (seg.kind !== 'bold' && seg.kind !== 'code') continue;
    for (const m of seg.text.matchAll(RUN_ID)) ids.add(m[1]!);
  }
  const missing = [...ids].filter((id) => !rendered.includes(`href="/runs/${id}"`));
  if (missing.length === 0) return '';
  const links = missing.map(
    (id) => `<a href="/runs/${id}" aria-label="Open the page of run ${id}">Open the run page</a>`,
  );
  return `<div class="links">${links.join(' · ')}</div>`;
}

/** The inner HTML of a console message: text, fields and buttons. */
export function renderMessageHtml(message: OutgoingMessage): string {
  const [text = []] = splitRichTextInto(message.text, MAX_WEB_TEXT_LENGTH, 1);
  const parts = [`<div class="text">${renderRichHtml(text)}</div>`];
  if (message.fields && message.fields.length > 0) {
    const rows = message.fields.map(
      (f) => `<dt>${escapeHtml(f.label)}</dt><dd>${linkRuns(escapeHtml(f.value))}</dd>`,
    );
    parts.push(`<dl class="fields">${rows.join('')}</dl>`);
  }
  if (message.buttons && message.buttons.length > 0) {
    const buttons = message.buttons.map(
      (b) =>
        `<button type="button" class="btn btn-${b.style ?? 'default'}" data-token="${escapeHtml(b.id)}">${escapeHtml(b.label)}</button>`,
    );
    parts.push(`<div class="buttons">${buttons.join('')}</div>`);
  }
  parts.push(runPageLinks(text, parts.join('')));
  return parts.join('');
}

/** A message ref: the console chat, this process's boot id, and a sequence number. */
export function formatMessageRef(boot: string, n: number): MessageRef {
  return `${CONSOLE_CHAT_REF}#${boot}.${n}`;
}

/** Checks a message ref's shape (INVALID_INPUT otherwise); whether it is held is another matter. */
export function assertMessageRef(ref: string): MessageRef {
  if (!/^web:console#[A-Za-z0-9_-]{1,32}\.[0-9]{1,15}$/.test(ref)) {
    throw new InvalidInputError(`"${ref.slice(0, 80)}" is not a web console message ref`);
  }
  return ref;
}

/** Refuses any chat ref but the console's. */
export function assertConsoleChat(chatRef: string): void {
  if (chatRef !== CONSOLE_CHAT_REF) {
    throw new InvalidInputError(
      `the web console has one chat, ${CONSOLE_CHAT_REF}, not ${chatRef}`,
    );
  }
}
