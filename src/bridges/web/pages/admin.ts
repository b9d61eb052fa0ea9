/**
 * The admin pages (pure rendering): Access (bound chats and who has which role where, with the
 * CLI's bind/unbind/allow/deny as plain forms) and Audit (filters, the entries, CSV and JSON
 * export links). Every value is escaped.
 */

import type { AccessView, AuditQuery, AuditRow } from '../admin-source.ts';
import { escapeHtml as e } from '../outbound.ts';
import { relativeTime, statusBadge } from './runs.ts';

/** Audit outcomes, for the filter. */
export const AUDIT_OUTCOMES = ['allowed', 'refused', 'failed'] as const;

const cell = (label: string, html: string, cls = '') =>
  `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${html}</td>`;

function postForm(csrf: string, fields: Record<string, string>, label: string, cls = ''): string {
  const hidden = Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${k}" value="${e(v)}">`)
    .join('');
  return `<form method="post" action="/api/access"><input type="hidden" name="csrf" value="${e(csrf)}">${hidden}<button type="submit" class="btn ${cls}">${label}</button></form>`;
}

/** Body of the Access page; `flash` is the outcome of the last edit. */
export function accessBody(
  view: AccessView,
  roles: readonly string[],
  csrf: string,
  flash?: { ok: boolean; text: string },
): string {
  const note = flash
    ? `<p role="status" class="card">${flash.ok ? '' : '<b>Refused:</b> '}${e(flash.text)}</p>`
    : '';
  const bindings =
    view.bindings.length === 0
      ? '<p class="muted">No chat is bound.</p>'
      : `<table class="list" id="bindings"><thead><tr><th>Chat</th><th>Workspace</th><th>Default workflow</th><th>Action</th></tr></thead><tbody>${view.bindings
          .map(
            (b) =>
              `<tr>${cell('Chat', `<code>${e(b.chat)}</code>`)}${cell('Workspace', `<code>${e(b.workspace)}</code>`)}${cell('Default workflow', e(b.defaultWorkflow ?? ''))}${cell('Action', postForm(csrf, { op: 'unbind', chat: b.chat }, `Unbind <span class="skip">${e(b.chat)}</span>`, 'btn-danger'))}</tr>`,
          )
          .join('')}</tbody></table>`;
  const roleRows =
    view.roles.length === 0
      ? '<p class="muted">Nobody has a role yet.</p>'
      : `<table class="list" id="roles"><thead><tr><th>User</th><th>Role</th><th>Where</th><th>Action</th></tr></thead><tbody>${view.roles
          .map((r) => {
            const where = r.chat === null ? 'global' : r.chat;
            const fields: Record<string, string> = { op: 'deny', user: r.user };
            if (r.chat !== null) fields.chat = r.chat;
            return `<tr>${cell('User', `<code>${e(r.user)}</code>`)}${cell('Role', e(r.role))}${cell('Where', e(where))}${cell('Action', postForm(csrf, fields, `Remove role <span class="skip">of ${e(r.user)} (${e(where)})</span>`, 'btn-danger'))}</tr>`;
          })
          .join('')}</tbody></table>`;
  const chatOptions = view.bindings
    .map((b) => `<option value="${e(b.chat)}">${e(b.chat)}</option>`)
    .join('');
  const roleOptions = roles.map((r) => `<option value="${e(r)}">${e(r)}</option>`).join('');
  const allowForm = `<form class="filters card" method="post" action="/api/access" aria-label="Give a role">
<input type="hidden" name="csrf" value="${e(csrf)}"><input type="hidden" name="op" value="allow">
<label>User (platform:id)<input type="text" name="user" required maxlength="200" placeholder="telegram:123456"></label>
<label>Role<select name="role">${roleOptions}</select></label>
<label>Where<select name="chat"><option value="">global</option>${chatOptions}</select></label>
<button type="submit" class="btn btn-primary">Give role</button></form>`;
  const bindForm = `<form class="filters card" method="post" action="/api/access" aria-label="Bind a chat">
<input type="hidden" name="csrf" value="${e(csrf)}"><input type="hidden" name="op" value="bind">
<label>Chat ref<input type="text" name="chat" required maxlength="200" placeholder="telegram:-1001234"></label>
<label>Workspace folder<input type="text" name="workspace" required maxlength="1000" placeholder="/srv/projects/app"></label>
<label>Default workflow<input type="text" name="workflow" maxlength="200"></label>
<button type="submit" class="btn btn-primary">Bind</button></form>`;
  return `<h1>Access</h1>${note}<p class="muted">The same rules as <code>phasebridge bind</code>, <code>unbind</code>, <code>allow</code> and <code>deny</code>; every change is in the audit log, by web:admin.</p>
<h2>Bound chats</h2>${bindings}${bindForm}<h2>Roles</h2>${roleRows}${allowForm}`;
}

/** The audit filters as the URL carries them (also for the export links). */
export function auditSearch(q: Omit<AuditQuery, 'limit'>): string {
  const p = new URLSearchParams();
  if (q.actor) p.set('actor', q.actor);
  if (q.action) p.set('action', q.action);
  if (q.outcome) p.set('outcome', q.outcome);
  if (q.chat) p.set('chat', q.chat);
  if (q.since !== undefined) p.set('since', new Date(q.since).toISOString().slice(0, 10));
  if (q.until !== undefined)
    p.set('until', new Date(q.until - 86_400_000).toISOString().slice(0, 10));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Body of the Audit page. */
export function auditBody(rows: readonly AuditRow[], q: AuditQuery, now = Date.now()): string {
  const text = (name: string, label: string, value?: string) =>
    `<label>${label}<input type="text" name="${name}" value="${e(value ?? '')}" maxlength="200"></label>`;
  const date = (name: string, label: string, ms?: number) =>
    `<label>${label}<input type="date" name="${name}" value="${ms === undefined ? '' : new Date(ms).toISOString().slice(0, 10)}"></label>`;
  const outcomes = ['', ...AUDIT_OUTCOMES]
    .map(
      (o) =>
        `<option value="${o}"${o === (q.outcome ?? '') ? ' selected' : ''}>${o || 'any'}</option>`,
    )
    .join('');
  const until = q.until === undefined ? undefined : q.until - 86_400_000;
  const form = `<form class="filters" method="get" action="/admin/audit" role="search" aria-label="Filter the audit log">
${text('actor', 'Actor', q.actor)}${text('action', 'Action', q.action)}<label>Outcome<select name="outcome">${outcomes}</select></label>
${text('chat', 'Chat', q.chat)}${date('since', 'From (UTC)', q.since)}${date('until', 'To (UTC)', until)}
<button type="submit" class="btn btn-primary">Filter</button> <a href="/admin/audit">Clear</a></form>`;
  const search = auditSearch(q);
  const exports = `<p>Export these entries: <a href="/admin/audit.csv${search}" download>CSV</a> · <a href="/admin/audit.json${search}" download>JSON</a></p>`;
  const table =
    rows.length === 0
      ? '<p class="muted" id="audit-count">No audit entry matches.</p>'
      : `<p id="audit-count">${rows.length === q.limit ? `The newest ${q.limit} entries` : `${rows.length} entries`}, newest first</p><table class="list" id="audit"><thead><tr><th>When</th><th>Actor</th><th>Action</th><th>Target</th><th>Chat</th><th>Outcome</th><th>Detail</th></tr></thead><tbody>${rows
          .map(
            (r) =>
              `<tr>${cell('When', relativeTime(r.at, now), 'nowrap')}${cell('Actor', `<span title="${e(r.actor)}">${e(r.actorName ?? r.actor)}</span>`)}${cell('Action', e(r.action))}${cell('Target', e(r.target ?? ''))}${cell('Chat', e(r.chatRef ?? ''))}${cell('Outcome', statusBadge(r.outcome === 'allowed' ? 'approved' : 'rejected', r.outcome))}${cell('Detail', e(r.detail ?? ''))}</tr>`,
          )
          .join('')}</tbody></table>`;
  return `<h1>Audit log</h1>${form}${exports}${table}`;
}

const CSV_COLUMNS = [
  'id',
  'at',
  'actor',
  'action',
  'target',
  'chatRef',
  'outcome',
  'detail',
  // Last, so readers of the older columns are not moved (issue 29).
  'actorName',
] as const;

/** One CSV field: quoted, quotes doubled, and a leading = + - @ defused for spreadsheets. */
function csvField(v: string | number | null): string {
  let s = v === null ? '' : String(v);
  if (/^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return `"${s.replace(/"/g, '""')}"`;
}

/** The entries as CSV (RFC 4180, CRLF, a header line, times as ISO 8601 UTC). */
export function auditCsv(rows: readonly AuditRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push(
      CSV_COLUMNS.map((c) =>
        csvField(c === 'at' ? new Date(r.at).toISOString() : (r[c] ?? null)),
      ).join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

/** The entries as JSON (times as ISO 8601 UTC). */
export function auditJson(rows: readonly AuditRow[]): string {
  return `${JSON.stringify(
    rows.map((r) => ({ ...r, at: new Date(r.at).toISOString() })),
    null,
    2,
  )}\n`;
}
