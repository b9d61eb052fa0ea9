/**
 * The shell every console page shares: one inline stylesheet and at most one inline script,
 * both allowed by a per-response CSP nonce (no other script or style can run), and the nav.
 * Callers pass `body` as already-escaped HTML.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { BASE_HEADERS } from '../../../http/respond.ts';
import { escapeHtml } from '../outbound.ts';

const CSS = `
:root{--bg:#fafafa;--fg:#1d1f23;--muted:#666;--line:#ddd;--card:#fff;--accent:#2458d6;--bad:#b3261e;--good:#1e7a3a;--warn:#9a6700;font:15px/1.45 system-ui,sans-serif;color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#16181c;--fg:#e6e6e6;--muted:#9aa0a6;--line:#33363b;--card:#1f2227;--accent:#7aa2ff;--bad:#ff8a80;--good:#7bd88f;--warn:#e3b341}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg)}
header{display:flex;gap:1.2em;align-items:center;padding:.6em 1em;border-bottom:1px solid var(--line);background:var(--card)}
header b{margin-right:auto}header a{color:var(--fg);text-decoration:none}header a.on{color:var(--accent);font-weight:600}
main{max-width:60em;margin:0 auto;padding:1em}a{color:var(--accent)}
code,pre{font:13px/1.4 ui-monospace,monospace}pre{white-space:pre-wrap;word-break:break-word;margin:.4em 0}
.msg{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6em .8em;margin:.5em 0}
.msg .text{white-space:pre-wrap;word-break:break-word}.msg-user{border-style:dashed;color:var(--muted)}
.fields{display:grid;grid-template-columns:max-content 1fr;gap:.1em .8em;margin:.5em 0 0}.fields dt{font-weight:600}.fields dd{margin:0}
.buttons{display:flex;gap:.5em;margin-top:.6em;flex-wrap:wrap}
.btn,button{font:inherit;padding:.35em .9em;border-radius:6px;border:1px solid var(--line);background:var(--card);color:var(--fg);cursor:pointer}
.btn-primary{background:var(--accent);border-color:var(--accent);color:#fff}.btn-danger{border-color:var(--bad);color:var(--bad)}
button:disabled{opacity:.5;cursor:wait}
form.say{display:flex;gap:.5em;position:sticky;bottom:0;background:var(--bg);padding:.6em 0}
input[type=text]{flex:1;font:inherit;padding:.45em .6em;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg)}
.prompt{display:flex;gap:.5em;align-items:center;border:1px solid var(--accent);border-radius:8px;padding:.6em;margin:.5em 0;background:var(--card)}
#toasts{position:fixed;top:3.5em;right:1em;display:flex;flex-direction:column;gap:.5em;max-width:24em;z-index:9}
.toast{background:var(--fg);color:var(--bg);padding:.6em .9em;border-radius:6px;cursor:pointer;white-space:pre-wrap}.toast.err{background:var(--bad);color:#fff}
#conn{color:var(--muted);font-size:.85em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35em .5em;border-bottom:1px solid var(--line);vertical-align:top}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num{white-space:nowrap}
.st{font-weight:600}.st-completed{color:var(--good)}.st-failed,.st-cancelled{color:var(--bad)}.st-awaiting,.st-blocked,.st-running,.st-active{color:var(--warn)}
.muted{color:var(--muted)}details summary{cursor:pointer}
`;

/** A fresh CSP nonce. */
export function newNonce(): string {
  return randomBytes(16).toString('base64');
}

/** The CSP of console pages: nothing loads or runs but our own nonce-tagged inline code. */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
  ].join('; ');
}

/** What a page puts in the shell. */
export interface PageParts {
  readonly title: string;
  readonly nonce: string;
  /** Escaped HTML. */
  readonly body: string;
  readonly nav: 'console' | 'runs' | 'none';
  /** The session's CSRF token, for pages that post. */
  readonly csrf?: string;
  /** Trusted inline script (our own code, no user text). */
  readonly script?: string;
  /** Reload the page every N seconds (runs pages of live runs). */
  readonly refreshSeconds?: number;
}

/** The whole HTML document (its empty data: icon spares browsers a 404 on /favicon.ico). */
export function renderPage(p: PageParts): string {
  const link = (href: string, label: string, on: boolean) =>
    `<a href="${href}"${on ? ' class="on"' : ''}>${label}</a>`;
  const nav =
    p.nav === 'none'
      ? ''
      : `${link('/', 'Console', p.nav === 'console')}${link('/runs', 'Runs', p.nav === 'runs')}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(p.title)} · phasebridge</title>
<link rel="icon" href="data:,">
${p.csrf === undefined ? '' : `<meta name="csrf-token" content="${escapeHtml(p.csrf)}">`}
${p.refreshSeconds === undefined ? '' : `<meta http-equiv="refresh" content="${p.refreshSeconds}">`}
<style nonce="${p.nonce}">${CSS}</style></head>
<body><header><b>phasebridge</b>${nav}<span id="conn"></span></header>
<main>${p.body}</main>
${p.script === undefined ? '' : `<script nonce="${p.nonce}">${p.script}</script>`}
</body></html>`;
}

/** Writes an HTML page with its CSP. */
export function sendPage(res: ServerResponse, status: number, parts: PageParts): void {
  const html = renderPage(parts);
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-length': Buffer.byteLength(html),
    'content-security-policy': contentSecurityPolicy(parts.nonce),
    'x-frame-options': 'DENY',
  });
  res.end(html);
}

/** A short page with a heading and a message (errors, "not logged in"). */
export function sendNotice(res: ServerResponse, status: number, title: string, text: string): void {
  const body = `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`;
  sendPage(res, status, { title, nonce: newNonce(), body, nav: 'none' });
}
