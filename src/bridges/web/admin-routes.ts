/**
 * The admin pages' routes: GET `/admin/access`, GET `/admin/audit` (and `.csv` / `.json`
 * exports with the same filters), and POST `/api/access` (a plain form: the edit, then a 303
 * back to the Access page, which shows its outcome once).
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { describeError, hasCode, InvalidInputError } from '../../errors.ts';
import { BASE_HEADERS } from '../../http/respond.ts';
import type { AccessEdit, AdminSource, AuditQuery } from './admin-source.ts';
import { parseBody } from './inbound.ts';
import { accessBody, auditBody, auditCsv, auditJson } from './pages/admin.ts';
import { newNonce, sendNotice, sendPage } from './pages/layout.ts';
import type { Session } from './session.ts';

/** Entries the page shows, and the most an export holds. */
const PAGE_ENTRIES = 200;
const EXPORT_ENTRIES = 10_000;
/** The local admin every console edit is made by (the console's only user). */
const CONSOLE_ACTOR = 'web:admin';

const ref = z.string().trim().min(1).max(200);
const editBody = z.discriminatedUnion('op', [
  z.object({ op: z.literal('allow'), user: ref, role: ref, chat: z.string().max(200).optional() }),
  z.object({ op: z.literal('deny'), user: ref, chat: z.string().max(200).optional() }),
  z.object({
    op: z.literal('bind'),
    chat: ref,
    workspace: z.string().trim().min(1).max(1000),
    workflow: z.string().trim().max(200).optional(),
  }),
  z.object({ op: z.literal('unbind'), chat: ref }),
]);

/** The outcome of each session's last edit, shown once by the next Access page. */
export class Flash {
  readonly #bySession = new Map<string, { ok: boolean; text: string }>();
  /** Keeps the outcome for the session. */
  set(sessionId: string, ok: boolean, text: string): void {
    this.#bySession.set(sessionId, { ok, text });
  }
  /** The outcome, once. */
  take(sessionId: string): { ok: boolean; text: string } | undefined {
    const f = this.#bySession.get(sessionId);
    this.#bySession.delete(sessionId);
    return f;
  }
}

/** Answers a GET under /admin. */
export async function handleAdminPage(
  admin: AdminSource | undefined,
  flash: Flash,
  session: Session,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (!admin) {
    sendNotice(res, 503, 'Admin unavailable', 'This console was started without bridge.db.');
    return;
  }
  const path = url.pathname;
  if (path === '/admin/access') {
    const body = accessBody(
      await admin.access(),
      admin.roles,
      session.csrfToken,
      flash.take(session.id),
    );
    sendPage(res, 200, { title: 'Access', body, nonce: newNonce(), nav: 'access' });
    return;
  }
  if (path === '/admin/audit' || path === '/admin/audit.csv' || path === '/admin/audit.json') {
    let q: AuditQuery;
    try {
      q = auditQuery(url, path === '/admin/audit' ? PAGE_ENTRIES : EXPORT_ENTRIES);
    } catch (err) {
      if (!hasCode(err, 'INVALID_INPUT')) throw err;
      sendNotice(res, 400, 'Bad filter', (err as Error).message);
      return;
    }
    const rows = await admin.audit(q);
    if (path === '/admin/audit') {
      sendPage(res, 200, {
        title: 'Audit',
        body: auditBody(rows, q),
        nonce: newNonce(),
        nav: 'audit',
      });
      return;
    }
    const csv = path.endsWith('.csv');
    const data = csv ? auditCsv(rows) : auditJson(rows);
    res.writeHead(200, {
      ...BASE_HEADERS,
      'content-type': csv ? 'text/csv; charset=utf-8' : 'application/json; charset=utf-8',
      'content-length': Buffer.byteLength(data),
      'content-disposition': `attachment; filename="phasebridge-audit.${csv ? 'csv' : 'json'}"`,
    });
    res.end(data);
    return;
  }
  sendNotice(res, 404, 'Not found', 'There is no such admin page.');
}

function auditQuery(url: URL, limit: number): AuditQuery {
  const get = (k: string) => {
    const v = url.searchParams.get(k)?.trim();
    return v ? v.slice(0, 200) : undefined;
  };
  const day = (k: string, plus = 0) => {
    const v = get(k);
    if (v === undefined) return undefined;
    const ms = /^\d{4}-\d\d-\d\d$/.test(v) ? Date.parse(`${v}T00:00:00Z`) : Number.NaN;
    if (Number.isNaN(ms)) throw new InvalidInputError(`${k} must be a date like 2026-11-30`);
    return ms + plus;
  };
  const outcome = get('outcome');
  if (outcome !== undefined && !['allowed', 'refused', 'failed'].includes(outcome)) {
    throw new InvalidInputError('outcome must be allowed, refused or failed');
  }
  const since = day('since');
  const until = day('until', 86_400_000);
  return {
    limit,
    ...(get('actor') && { actor: get('actor') }),
    ...(get('action') && { action: get('action') }),
    ...(outcome && { outcome }),
    ...(get('chat') && { chat: get('chat') }),
    ...(since !== undefined && { since }),
    ...(until !== undefined && { until }),
  };
}

/** Applies a posted access edit; the outcome is flashed and the browser sent back to Access. */
export async function postAccessEdit(
  admin: AdminSource | undefined,
  flash: Flash,
  session: Session,
  form: Record<string, string>,
  res: ServerResponse,
): Promise<void> {
  try {
    if (!admin) throw new InvalidInputError('this console was started without bridge.db');
    const body = parseBody(editBody, form) as AccessEdit & { chat?: string };
    // An empty "Where" is the global scope, as the CLI without --chat.
    const edit = { ...body, ...(body.chat === '' && { chat: undefined }) } as AccessEdit;
    if (edit.op === 'bind' && edit.workflow === '') delete (edit as { workflow?: string }).workflow;
    const actor = session.person
      ? `${session.person.platform}:${session.person.id}`
      : CONSOLE_ACTOR;
    flash.set(session.id, true, await admin.edit(actor, edit));
  } catch (err) {
    if (!hasCode(err, 'INVALID_INPUT') && !hasCode(err, 'NOT_FOUND')) throw err;
    flash.set(session.id, false, describeError(err).chatReply);
  }
  res.writeHead(303, { ...BASE_HEADERS, location: '/admin/access' }).end();
}
