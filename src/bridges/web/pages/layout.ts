/**
 * The shell every console page shares: one inline stylesheet and at most one inline script,
 * both allowed by a per-response CSP nonce (no other script or style can run), and the nav.
 * Callers pass `body` as already-escaped HTML.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { BASE_HEADERS } from '../../../http/respond.ts';
import { escapeHtml } from '../outbound.ts';
import { CSS } from './style.ts';

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
  readonly nav: NavItem | 'none';
  /** The session's CSRF token, for pages that post. */
  readonly csrf?: string;
  /** Trusted inline script (our own code, no user text). */
  readonly script?: string;
}

/** The console's sections, as the nav names them. */
export type NavItem = 'console' | 'runs' | 'queue' | 'access' | 'audit';

const NAV: readonly [NavItem, string, string][] = [
  ['console', '/', 'Console'],
  ['runs', '/runs', 'Runs'],
  ['queue', '/queue', 'Queue'],
  ['access', '/admin/access', 'Access'],
  ['audit', '/admin/audit', 'Audit'],
];

/** The whole HTML document (its empty data: icon spares browsers a 404 on /favicon.ico). */
export function renderPage(p: PageParts): string {
  // A page without its own nav (errors, 404) still links home, so nobody is stranded.
  const items = p.nav === 'none' ? NAV.slice(0, 2) : NAV;
  const links = items
    .map(
      ([id, href, label]) =>
        `<a href="${href}"${id === p.nav ? ' aria-current="page"' : ''}>${label}</a>`,
    )
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(p.title)} · phasebridge</title>
<link rel="icon" href="data:,">
${p.csrf === undefined ? '' : `<meta name="csrf-token" content="${escapeHtml(p.csrf)}">`}
<style nonce="${p.nonce}">${CSS}</style></head>
<body><a class="skip" href="#main">Skip to content</a><header><b>phasebridge</b><nav aria-label="Console sections">${links}</nav><span id="conn" role="status"></span></header>
<main id="main">${p.body}</main>
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
