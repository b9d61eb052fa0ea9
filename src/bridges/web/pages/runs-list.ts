/**
 * The runs list (pure rendering): filters (status, workflow, chat, person waiting, age, idle,
 * workspace, started by), a search over ids and specifications, one page of runs from bridge.db's
 * index, and Newer/Older links by key. Times are relative with the exact UTC time on hover; ids
 * never wrap; below 720 px the table is a stacked list.
 */
import { escapeHtml as e } from '../outbound.ts';
import {
  RUN_STATUSES,
  type RunKeyView,
  type RunListFacets,
  type RunListItem,
  type RunListPage,
  type RunListQuery,
} from '../runs-source.ts';
import { relativeTime, runHref, statusBadge } from './runs.ts';

/** Rows per page of the runs list. */
export const RUNS_PAGE_SIZE = 50;

/** The list's query as the URL carries it (durations as written: `30m`, `24h`, `7d`). */
export interface ListParams {
  readonly status?: string;
  readonly workflow?: string;
  readonly chat?: string;
  readonly waiting?: string;
  readonly age?: string;
  readonly idle?: string;
  readonly workspace?: string;
  readonly by?: string;
  readonly q?: string;
  /** The page's edge, as `<updatedAt ms>.<run id>`. */
  readonly before?: string;
  readonly after?: string;
}

const FILTER_KEYS = [
  'status',
  'workflow',
  'chat',
  'waiting',
  'age',
  'idle',
  'workspace',
  'by',
  'q',
] as const;
const KEYS = [...FILTER_KEYS, 'before', 'after'] as const;

const DURATION = /^([1-9]\d{0,3})([mhd])$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const KEY = /^(\d{1,15})\.([A-Za-z0-9][A-Za-z0-9._:-]{0,199})$/;
const AGE_CHOICES = [
  ['1h', 'last hour'],
  ['24h', 'last 24 hours'],
  ['7d', 'last 7 days'],
  ['30d', 'last 30 days'],
] as const;
const IDLE_CHOICES = [
  ['15m', 'over 15 minutes'],
  ['1h', 'over an hour'],
  ['24h', 'over a day'],
  ['7d', 'over a week'],
] as const;

/** The list's parameters, or what is wrong with the URL's (said so the person can fix it). */
export type ParsedList = { readonly params: ListParams } | { readonly error: string };

/** A duration such as `24h` in ms, or undefined when it is not one (1–9999 m, h or d). */
export function durationMs(text: string): number | undefined {
  const m = DURATION.exec(text);
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

function parseKey(text: string): RunKeyView | undefined {
  const m = KEY.exec(text);
  return m ? { updatedAt: Number(m[1]), id: m[2]! } : undefined;
}

/** Reads and checks the list's parameters from a URL; unknown parameters are ignored. */
export function listParams(url: URL): ParsedList {
  const out: Record<string, string> = {};
  for (const k of KEYS) {
    const v = url.searchParams.get(k)?.trim();
    if (!v) continue;
    if (v.length > 300) return { error: `The ${k} filter is too long (300 characters at most).` };
    out[k] = v;
  }
  if (out.status && !(RUN_STATUSES as readonly string[]).includes(out.status)) {
    return {
      error: `Unknown status "${out.status}": use one of ${RUN_STATUSES.join(', ')}.`,
    };
  }
  for (const k of ['age', 'idle'] as const) {
    if (out[k] && durationMs(out[k]) === undefined) {
      return {
        error: `The ${k} filter "${out[k]}" is not a duration: write a number and m, h or d (e.g. 30m, 24h, 7d).`,
      };
    }
  }
  for (const k of ['before', 'after'] as const) {
    if (out[k] && !parseKey(out[k])) {
      return {
        error: `The ${k} link "${out[k]}" is not a page of this list: start again from /runs.`,
      };
    }
  }
  if (out.before && out.after)
    return { error: 'A page is either before or after a run, not both.' };
  return { params: out as ListParams };
}

/** The index query of the parameters (`now` anchors age and idle). */
export function listQuery(p: ListParams, now = Date.now()): RunListQuery {
  const before = p.before === undefined ? undefined : parseKey(p.before);
  const after = p.after === undefined ? undefined : parseKey(p.after);
  return {
    ...(p.status && { status: p.status as RunListQuery['status'] & string }),
    ...(p.workflow && { workflowId: p.workflow }),
    ...(p.workspace && { workspace: p.workspace }),
    ...(p.by && { startedBy: p.by }),
    ...(p.chat && { originChat: p.chat }),
    ...(p.waiting && { waitingFor: p.waiting }),
    ...(p.age && { updatedSince: now - durationMs(p.age)! }),
    ...(p.idle && { updatedBefore: now - durationMs(p.idle)! }),
    ...(p.q && { text: p.q }),
    ...(before && { before }),
    ...(after && { after }),
    limit: RUNS_PAGE_SIZE,
  };
}

/** The list's URL with these filters and, optionally, a page edge. */
function hrefOf(p: ListParams, edge?: { before: string } | { after: string }): string {
  const q = new URLSearchParams();
  for (const k of FILTER_KEYS) if (p[k]) q.set(k, p[k]!);
  if (edge) for (const [k, v] of Object.entries(edge)) q.set(k, v);
  const s = q.toString();
  return s ? `/runs?${s}` : '/runs';
}

const keyOf = (r: RunListItem) => `${r.updatedAt}.${r.id}`;

type Choice = readonly [value: string, label: string];

function select(name: string, label: string, options: readonly Choice[], value?: string): string {
  // A value from the URL the facets do not offer (e.g. `age=3d`) stays chosen.
  const all = value && !options.some(([v]) => v === value) ? [...options, [value, value]] : options;
  const opts = [`<option value="">any</option>`]
    .concat(
      all.map(
        ([v, l]) => `<option value="${e(v)}"${v === value ? ' selected' : ''}>${e(l)}</option>`,
      ),
    )
    .join('');
  return `<label>${label}<select name="${name}">${opts}</select></label>`;
}

const same = (xs: readonly string[]): Choice[] => xs.map((x) => [x, x]);

/**
 * The people choices ("Started by", "Person waiting"): each person by name, the id only as the
 * value; two people under one name are told apart by their ids.
 */
export function starterChoices(f: RunListFacets): Choice[] {
  const names = f.startedByNames ?? {};
  const label = (id: string) => names[id] ?? id;
  const count = new Map<string, number>();
  for (const id of f.startedBy) count.set(label(id), (count.get(label(id)) ?? 0) + 1);
  return f.startedBy
    .map((id): Choice => [id, (count.get(label(id)) ?? 0) > 1 ? `${label(id)} (${id})` : label(id)])
    .sort((a, b) => a[1].localeCompare(b[1]));
}

function filtersForm(p: ListParams, f: RunListFacets): string {
  const people = starterChoices(f);
  return `<form class="filters" method="get" action="/runs" role="search" aria-label="Filter runs">
<label>Search id or spec<input type="search" name="q" value="${e(p.q ?? '')}" maxlength="300"></label>
${select('status', 'Status', same(RUN_STATUSES), p.status)}${select('workflow', 'Workflow', same(f.workflows), p.workflow)}
${select('chat', 'Chat', same(f.chats ?? []), p.chat)}${select('waiting', 'Person waiting', people, p.waiting)}
${select('age', 'Updated', AGE_CHOICES, p.age)}${select('idle', 'Idle', IDLE_CHOICES, p.idle)}
${select('workspace', 'Workspace', same(f.workspaces), p.workspace)}${select('by', 'Started by', people, p.by)}
<button type="submit" class="btn btn-primary">Filter</button>${FILTER_KEYS.some((k) => p[k]) ? ' <a href="/runs">Clear</a>' : ''}</form>`;
}

function row(r: RunListItem, now: number): string {
  const cell = (label: string, html: string, cls = '') =>
    `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${html}</td>`;
  return `<tr>${cell('Run', `<a href="${runHref(r.id)}">${e(r.id)}</a>`, 'nowrap')}${cell('Workflow', e(r.workflowId))}${cell('Status', statusBadge(r.status))}${cell('Started by', e(r.startedByName ?? r.startedBy ?? ''))}${cell('Created', relativeTime(r.createdAt, now), 'nowrap')}${cell('Updated', relativeTime(r.updatedAt, now), 'nowrap')}${cell('Workspace', `<span title="${e(r.workspace)}">${e(r.workspace)}</span>`, 'clip')}</tr>`;
}

/** The list's results (count, table, pager): what the live list replaces when runs change. */
export function runsListResults(page: RunListPage, p: ListParams, now = Date.now()): string {
  const filtered = FILTER_KEYS.some((k) => p[k]);
  if (page.items.length === 0) {
    const none =
      page.total > 0
        ? 'No runs on this page any more.'
        : filtered
          ? 'No run matches these filters.'
          : 'No runs yet.';
    const back = page.total > 0 ? ` <a href="${e(hrefOf(p))}">Newest</a>` : '';
    return `<div id="results"><p class="muted" id="runs-count" role="status">${none}${back}</p></div>`;
  }
  const total = `${page.total.toLocaleString('en-US')}${page.totalCapped ? '+' : ''}`;
  const noun = page.total === 1 && !page.totalCapped ? 'run' : 'runs';
  const what = `${filtered ? 'matching ' : ''}${noun}`;
  // A search counts only its page: say more match rather than a count it did not make.
  const count =
    page.totalCapped && page.total <= page.items.length
      ? `<p id="runs-count" role="status">Showing ${page.items.length} ${what}; more on other pages</p>`
      : `<p id="runs-count" role="status">Showing ${page.items.length} of ${total} ${what}</p>`;
  const first = page.items[0]!;
  const last = page.items.at(-1)!;
  const links = [
    page.hasNewer ? `<a href="${e(hrefOf(p))}">Newest</a>` : '',
    page.hasNewer
      ? `<a href="${e(hrefOf(p, { after: keyOf(first) }))}" rel="prev">← Newer</a>`
      : '',
    page.hasOlder
      ? `<a href="${e(hrefOf(p, { before: keyOf(last) }))}" rel="next">Older →</a>`
      : '',
  ].filter(Boolean);
  const pager = links.length ? `<nav class="pager" aria-label="Pages">${links.join('')}</nav>` : '';
  const rows = page.items.map((r) => row(r, now)).join('');
  return `<div id="results">${count}<table class="list" id="runs"><thead><tr><th>Run</th><th>Workflow</th><th>Status</th><th>Started by</th><th>Created</th><th>Updated</th><th>Workspace</th></tr></thead><tbody>${rows}</tbody></table>${pager}</div>`;
}

/** Body of the runs list. */
export function runsListBody(
  page: RunListPage,
  p: ListParams,
  facets: RunListFacets,
  now = Date.now(),
): string {
  return `<h1>Runs</h1>${filtersForm(p, facets)}${runsListResults(page, p, now)}`;
}
