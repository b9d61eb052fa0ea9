/**
 * The console's gatekeeping, in order: the one-time login link, the session cookie (401 without
 * it), and for state-changing requests the Origin check and the per-session CSRF token (403).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { InvalidInputError } from '../../errors.ts';
import { BASE_HEADERS, readBody, sendJson } from '../../http/respond.ts';
import { escapeHtml } from './outbound.ts';
import { newNonce, sendNotice, sendPage } from './pages/layout.ts';
import { type Session, type SessionStore, sessionCookie } from './session.ts';

/** What the guard needs from the console. */
export interface GuardOptions {
  readonly sessions: SessionStore;
  /** Origins accepted besides the request's own host (e.g. a TLS proxy's public origin). */
  readonly allowedOrigins: readonly string[];
  /** Mark the cookie Secure (when served through https). */
  readonly secureCookies: boolean;
  /** Serve only requests a trusted proxy says came over https (the console off loopback). */
  readonly httpsOnly?: { readonly trustForwardedProto: boolean } | undefined;
}

/**
 * True when the request may be served: always unless `httpsOnly`; then only with a trusted
 * `X-Forwarded-Proto: https` (a TLS proxy in front). Else answers 403 saying how to fix it.
 */
export function requireHttps(
  g: Pick<GuardOptions, 'httpsOnly'>,
  req: IncomingMessage,
  res: ServerResponse,
): boolean {
  if (g.httpsOnly === undefined) return true;
  const proto = req.headers['x-forwarded-proto'];
  const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase();
  if (g.httpsOnly.trustForwardedProto && first === 'https') return true;
  sendNotice(
    res,
    403,
    'The console needs https',
    'This console listens beyond loopback, so it is served over https only: put a TLS proxy in front and set PHASEBRIDGE_PUBLIC_URL to its https address, or set PHASEBRIDGE_TRUST_PROXY=x-forwarded-proto when the proxy sends X-Forwarded-Proto.',
  );
  return false;
}

/** Largest form/JSON body the console accepts. */
const MAX_FORM_BYTES = 16 * 1024;

/** True when a browser would call the request's answer a page (not a script's fetch). */
export function wantsHtml(req: IncomingMessage): boolean {
  return req.method === 'GET' && (req.headers.accept ?? '').includes('text/html');
}

/** Answers 401: a page telling how to log in, or JSON for scripts. */
export function sendUnauthorized(req: IncomingMessage, res: ServerResponse): void {
  if (wantsHtml(req)) {
    sendNotice(
      res,
      401,
      'Not logged in',
      'Open the login link that `phasebridge serve` printed (http://…/?token=…). Each link works once; `phasebridge login` prints a new one.',
    );
  } else {
    sendJson(res, 401, {
      error: 'Not logged in: open the login link of phasebridge serve or phasebridge login.',
    });
  }
}

/**
 * Handles `GET /?token=…`: a page with a Sign in button that posts the token, so a chat's link
 * preview (a GET) cannot use the link up. A browser that has a session already goes to `/`.
 */
export async function showLoginConfirm(
  g: GuardOptions,
  req: IncomingMessage,
  res: ServerResponse,
  token: string,
): Promise<void> {
  if (await g.sessions.fromCookieHeader(req.headers.cookie)) {
    res.writeHead(303, { ...BASE_HEADERS, location: '/' }).end();
    return;
  }
  const body = `<h1>Sign in to the phasebridge console</h1>
<p>This one-time link opens a session in this browser. It is used up when you press the button.</p>
<form method="post" action="login"><input type="hidden" name="token" value="${escapeHtml(token)}">
<button type="submit" id="sign-in" class="btn btn-primary">Sign in</button></form>`;
  sendPage(res, 200, { title: 'Sign in', nonce: newNonce(), body, nav: 'none' });
}

/**
 * Handles `POST /login` (the confirm page's form, or a script: form field `token`): a valid
 * token opens a session (cookie) and redirects to `/`; an invalid one is a 401, unless the
 * browser already has a session (then the token is ignored).
 */
export async function handleLogin(
  g: GuardOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!originAllowed(req, g.allowedOrigins)) {
    sendJson(res, 403, { error: 'Cross-origin request refused.' });
    return;
  }
  const token = (await readForm(req).catch(() => ({}) as Record<string, string>)).token ?? '';
  const grant = token === '' ? null : await g.sessions.claimLoginToken(token);
  if (grant !== null) {
    const { cookieValue } = await g.sessions.createSession(grant.person);
    res.writeHead(303, {
      ...BASE_HEADERS,
      location: '/',
      'set-cookie': sessionCookie(cookieValue, g.secureCookies),
    });
    res.end();
  } else if (await g.sessions.fromCookieHeader(req.headers.cookie)) {
    res.writeHead(303, { ...BASE_HEADERS, location: '/' }).end();
  } else {
    sendNotice(
      res,
      401,
      'Login link not valid',
      'This login link was used already or has expired. Run `phasebridge login` for a new one.',
    );
  }
}

/**
 * Same-origin check for state-changing requests: the Origin header, when sent, must name this
 * host (or an allowed origin); without Origin, Sec-Fetch-Site must not say cross-site. Clients
 * that send neither (curl) still need the session cookie and the CSRF token.
 */
export function originAllowed(req: IncomingMessage, allowed: readonly string[]): boolean {
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  if (origin === undefined) {
    return site === undefined || site === 'same-origin' || site === 'none';
  }
  // Under the pages' `Referrer-Policy: no-referrer`, a browser sends `Origin: null` with a plain
  // form post even to its own origin; Sec-Fetch-Site (set by the browser, not by page script)
  // then tells a same-origin post apart from one that came from elsewhere.
  if (origin === 'null') return site === 'same-origin';
  if (allowed.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.host === req.headers.host;
  } catch {
    return false; // includes the opaque origin "null"
  }
}

/** Reads a posted JSON or urlencoded body as string fields. */
export async function readForm(req: IncomingMessage): Promise<Record<string, string>> {
  const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const raw = (await readBody(req, MAX_FORM_BYTES)).toString('utf8');
  if (type === 'application/x-www-form-urlencoded') {
    return Object.fromEntries(new URLSearchParams(raw));
  }
  if (type !== 'application/json') {
    throw new InvalidInputError('send application/json or application/x-www-form-urlencoded');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new InvalidInputError('the body is not valid JSON');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new InvalidInputError('the body must be a JSON object');
  }
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(parsed)) if (typeof v === 'string') out[k] = v;
  return out;
}

/** The session of a request, or undefined after answering 401. */
export async function requireSession(
  g: GuardOptions,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<Session | undefined> {
  const session = await g.sessions.fromCookieHeader(req.headers.cookie);
  if (!session) sendUnauthorized(req, res);
  return session;
}

/**
 * Checks a state-changing request of a session: Origin, then the CSRF token (header
 * `x-csrf-token` or form field `csrf`). Answers 403 and returns false when either fails.
 */
export function checkWrite(
  g: GuardOptions,
  session: Session,
  req: IncomingMessage,
  res: ServerResponse,
  form: Record<string, string>,
): boolean {
  if (!originAllowed(req, g.allowedOrigins)) {
    sendJson(res, 403, { error: 'Cross-origin request refused.' });
    return false;
  }
  const header = req.headers['x-csrf-token'];
  const candidate = typeof header === 'string' ? header : form.csrf;
  if (!g.sessions.checkCsrf(session, candidate)) {
    sendJson(res, 403, { error: 'Missing or wrong CSRF token: reload the page.' });
    return false;
  }
  return true;
}
