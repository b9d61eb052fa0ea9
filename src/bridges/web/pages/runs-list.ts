/**
 * The runs list (pure rendering): filters (status, workflow, workspace, started by), a search
 * over ids and specifications, one page of runs from bridge.db's index, and pager links. Times
 * are relative with the exact UTC time on hover; ids never wrap; below 720 px the table is a
 * stacked list.
 */
import { escapeHtml as e } from '../outbound.ts';
import {
  RUN_STATUSES,
  type RunListFacets,
  type RunListItem,
  type RunListQuery,
} from '../runs-source.ts';
import { relativeTime, runHref, statusBadge } from './runs.ts';

/** Rows per page of the runs list. */
export const RUNS_PAGE_SIZE = 50;

/** The list's query as the URL carries it. */
export interface ListParams {
  readonly status?: string;
  readonly workflow?: string;
  readonly workspace?: string;
  readonly by?: string;
  readonly q?: string;
  /** 1-based. */
  readonly page: number;
}

const KEYS = ['status', 'workflow', 'workspace', 'by', 'q'] as const;

/** Reads the list's parameters from a URL (unknown status values are ignored). */
export function listParams(url: URL): ListParams {
  const get = (k: string) => {
    const v = url.searchParams.get(k)?.trim();
    return v ? v.slice(0, 300) : undefined;
  };
  const status = get('status');
  const page = Number(get('page') ?? 1);
  return {
    ...(status && (RUN_STATUSES as readonly string[]).includes(status) && { status }),
    ...(get('workflow') && { workflow: get('workflow') }),
    ...(get('workspace') && { workspace: get('workspace') }),
    ...(get('by') && { by: get('by') }),
    ...(get('q') && { q: get('q') }),
    page: Number.isInteger(page) && page >= 1 && page <= 100_000 ? page : 1,
  };
}

/** The index query of the parameters. */
export function listQuery(p: ListParams): RunListQuery {
  return {
    ...(p.status && { status: p.status as RunListQuery['status'] & string }),
    ...(p.workflow && { workflowId: p.workflow }),
    ...(p.workspace && { workspace: p.workspace }),
    ...(p.by && { startedBy: p.by }),
    ...(p.q && { text: p.q }),
    limit: RUNS_PAGE_SIZE,
    offset: (p.page - 1) * RUNS_PAGE_SIZE,
  };
}

function hrefOf(p: ListParams, page: number): string {
  const q = new URLSearchParams();
  for (const k of KEYS) if (p[k]) q.set(k, p[k]!);
  if (page > 1) q.set('page', String(page));
  const s = q.toString();
  return s ? `/runs?${s}` : '/runs';
}

/** One choice of a filter: the value sent, and the words shown (the value when absent). */
interface Choice {
  readonly value: string;
  readonly label?: string;
}

function select(
  name: string,
  label: string,
  options: readonly (string | Choice)[],
  value?: string,
): string {
  const opts = [`<option value="">any</option>`]
    .concat(
      options.map((o) => {
        const c = typeof o === 'string' ? { value: o } : o;
        const selected = c.value === value ? ' selected' : '';
        return `<option value="${e(c.value)}"${selected}>${e(c.label ?? c.value)}</option>`;
      }),
    )
    .join('');
  return `<label>${label}<select name="${name}">${opts}</select></label>`;
}

/**
 * The "Started by" choices: each person by name, the id only as the value; two people under one
 * name are told apart by their ids.
 */
export function starterChoices(f: RunListFacets): Choice[] {
  const names = f.startedByNames ?? {};
  const label = (id: string) => names[id] ?? id;
  const count = new Map<string, number>();
  for (const id of f.startedBy) count.set(label(id), (count.get(label(id)) ?? 0) + 1);
  return f.startedBy
    .map((id) => ({
      value: id,
      label: (count.get(label(id)) ?? 0) > 1 ? `${label(id)} (${id})` : label(id),
    }))
    .sort((a, b) => a.label.localeCompare(b.label));
}

function filtersForm(p: ListParams, f: RunListFacets): string {
  return `<form class="filters" method="get" action="/runs" role="search" aria-label="Filter runs">
<label>Search id or spec<input type="search" name="q" value="${e(p.q ?? '')}" maxlength="300"></label>
${select('status', 'Status', RUN_STATUSES, p.status)}${select('workflow', 'Workflow', f.workflows, p.workflow)}
${select('workspace', 'Workspace', f.workspaces, p.workspace)}${select('by', 'Started by', starterChoices(f), p.by)}
<button type="submit" class="btn btn-primary">Filter</button>${KEYS.some((k) => p[k]) ? ' <a href="/runs">Clear</a>' : ''}</form>`;
}

function row(r: RunListItem, now: number): string {
  const cell = (label: string, html: string, cls = '') =>
    `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${html}</td>`;
  return `<tr>${cell('Run', `<a href="${runHref(r.id)}">${e(r.id)}</a>`, 'nowrap')}${cell('Workflow', e(r.workflowId))}${cell('Status', statusBadge(r.status))}${cell('Started by', e(r.startedByName ?? r.startedBy ?? ''))}${cell('Created', relativeTime(r.createdAt, now), 'nowrap')}${cell('Updated', relativeTime(r.updatedAt, now), 'nowrap')}${cell('Workspace', `<span title="${e(r.workspace)}">${e(r.workspace)}</span>`, 'clip')}</tr>`;
}

/** The list's results (count, table, pager): what the live list replaces when runs change. */
export function runsListResults(
  page: { items: readonly RunListItem[]; total: number },
  p: ListParams,
  now = Date.now(),
): string {
  if (page.total === 0) {
    const none = KEYS.some((k) => p[k]) ? 'No run matches these filters.' : 'No runs yet.';
    return `<div id="results"><p class="muted" id="runs-count" role="status">${none}</p></div>`;
  }
  const first = (p.page - 1) * RUNS_PAGE_SIZE + 1;
  const last = first + page.items.length - 1;
  const pages = Math.max(1, Math.ceil(page.total / RUNS_PAGE_SIZE));
  const count = `<p id="runs-count" role="status">Runs ${first.toLocaleString('en-US')}–${last.toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')}</p>`;
  const prev = p.page > 1 ? `<a href="${hrefOf(p, p.page - 1)}" rel="prev">← Newer</a>` : '';
  const next = p.page < pages ? `<a href="${hrefOf(p, p.page + 1)}" rel="next">Older →</a>` : '';
  const pager = `<nav class="pager" aria-label="Pages">${prev}<span>Page ${p.page} of ${pages}</span>${next}</nav>`;
  const rows = page.items.map((r) => row(r, now)).join('');
  return `<div id="results">${count}<table class="list" id="runs"><thead><tr><th>Run</th><th>Workflow</th><th>Status</th><th>Started by</th><th>Created</th><th>Updated</th><th>Workspace</th></tr></thead><tbody>${rows}</tbody></table>${pager}</div>`;
}

/** Body of the runs list. */
export function runsListBody(
  page: { items: readonly RunListItem[]; total: number },
  p: ListParams,
  facets: RunListFacets,
  now = Date.now(),
): string {
  return `<h1>Runs</h1>${filtersForm(p, facets)}${runsListResults(page, p, now)}`;
}
