/**
 * The runs pages (pure rendering): the list of runs, one run's steps with times, tokens and
 * cost plus its ledger, and the tail of a step's log. Every value from a run is escaped.
 */
import { escapeHtml } from '../outbound.ts';
import type { RunListItem, RunView, StepView, TelemetryView } from '../runs-source.ts';
import { type LedgerRow, ledgerRows } from './ledger-rows.ts';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
const e = escapeHtml;

/** Seconds between page reloads while a run can still change. */
export const LIVE_REFRESH_SECONDS = 5;

/** `2026-11-29 14:30:00` (UTC) from an ISO string or epoch ms; '' when absent. */
export function formatTime(t: string | number | null | undefined): string {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().slice(0, 19).replace('T', ' ');
}

/** `1h 02m`, `3m 05s`, `12s`, `850 ms`; '' when it has not started. */
export function formatDuration(from?: string, to?: string, now = Date.now()): string {
  if (!from) return '';
  const ms = (to ? new Date(to).getTime() : now) - new Date(from).getTime();
  if (!Number.isFinite(ms) || ms < 0) return '';
  // Demo and quick steps take well under a second: "0s" would read as "did not run".
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = Math.round(ms / 1000);
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  return `${s}s`;
}

/** `$0.0123` (4 decimals under a dollar, 2 above). */
export function formatCost(usd: number): string {
  return `$${usd.toFixed(usd < 1 ? 4 : 2)}`;
}

const num = (n: number): string => n.toLocaleString('en-US');
const status = (s: string): string => `<span class="st st-${e(s)}">${e(s)}</span>`;
const runHref = (id: string): string => `/runs/${encodeURIComponent(id)}`;

/** Body of the runs list. */
export function runsListBody(runs: readonly RunListItem[]): string {
  if (runs.length === 0) return '<h1>Runs</h1><p class="muted">No runs yet.</p>';
  const rows = runs.map(
    (r) =>
      `<tr><td><a href="${runHref(r.id)}">${e(r.id)}</a></td><td>${e(r.workflowId)}</td><td>${status(r.status)}</td><td>${e(r.startedBy ?? '')}</td><td>${formatTime(r.createdAt)}</td><td>${formatTime(r.updatedAt)}</td><td class="muted">${e(r.workspace)}</td></tr>`,
  );
  return `<h1>Runs</h1><table><thead><tr><th>Run</th><th>Workflow</th><th>Status</th><th>Started by</th><th>Created (UTC)</th><th>Updated (UTC)</th><th>Workspace</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

/** True when the list should reload itself (a run is still going). */
export function listIsLive(runs: readonly RunListItem[]): boolean {
  return runs.some((r) => !TERMINAL.has(r.status));
}

function stepRow(run: RunView, s: StepView, i: number, now: number): string {
  const log =
    s.attempt > 0
      ? `<a href="${runHref(run.id)}/logs/${encodeURIComponent(s.id)}">log</a>`
      : '<span class="muted">—</span>';
  const t = s.telemetry;
  const error = s.error ? `<div class="muted">${e(s.error)}</div>` : '';
  return `<tr><td class="num">${run.cursor === i && runIsLive(run) ? '▶&nbsp;' : ''}${i + 1}</td><td>${e(s.id)}${error}</td><td>${e(s.agent)}</td><td>${status(s.excluded ? 'excluded' : s.status)}</td><td class="num">${s.attempt}</td><td>${formatTime(s.startedAt)}</td><td class="num">${formatDuration(s.startedAt, s.finishedAt, now)}</td><td class="num">${num(t.tokensIn)}</td><td class="num">${num(t.tokensOut)}</td><td class="num">${formatCost(t.costUsd)}</td><td>${log}</td></tr>`;
}

function totals(steps: readonly StepView[]): TelemetryView {
  return steps.reduce(
    (a, s) => ({
      tokensIn: a.tokensIn + s.telemetry.tokensIn,
      tokensOut: a.tokensOut + s.telemetry.tokensOut,
      cachedTokens: a.cachedTokens + s.telemetry.cachedTokens,
      costUsd: a.costUsd + s.telemetry.costUsd,
    }),
    { tokensIn: 0, tokensOut: 0, cachedTokens: 0, costUsd: 0 },
  );
}

function ledgerTable(rows: readonly LedgerRow[], truncated: boolean): string {
  if (rows.length === 0) return '<p class="muted">The ledger is empty.</p>';
  const shown = truncated
    ? `<p class="muted">The last ${rows.length} lines; earlier ones are not shown.</p>`
    : '';
  const body = rows.map(
    (r) =>
      `<tr><td class="num">${e(r.seq)}</td><td>${formatTime(r.at)}</td><td>${e(r.command)}</td><td>${e(r.actor)}</td><td>${e(r.events)}</td><td><details><summary>line</summary><pre>${e(r.raw)}</pre></details></td></tr>`,
  );
  return `${shown}<table><thead><tr><th class="num">Seq</th><th>At (UTC)</th><th>Command</th><th>By</th><th>Events</th><th></th></tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** Body of one run's page: summary, steps and the tail of its ledger.jsonl. */
export function runBody(
  run: RunView,
  ledger: { lines: readonly string[]; truncated: boolean },
  now = Date.now(),
): string {
  const sum = totals(run.steps);
  const notes = [
    run.checkpoint &&
      `Waiting at a checkpoint of step ${run.checkpoint.stepId}: ${run.checkpoint.reason}`,
    run.blocked && `Blocked: ${run.blocked.reason}`,
    run.outcome && `Outcome: ${run.outcome.reason}`,
  ]
    .filter((n): n is string => typeof n === 'string')
    .map((n) => `<p><b>${e(n)}</b></p>`)
    .join('');
  const workflow = run.workflow.name
    ? `${run.workflow.id} (${run.workflow.name})`
    : run.workflow.id;
  const steps = run.steps.map((s, i) => stepRow(run, s, i, now)).join('');
  return `<p><a href="/runs">← Runs</a></p><h1>${e(run.id)}</h1>${notes}
<dl class="fields"><dt>Status</dt><dd>${status(run.status)}</dd><dt>Workflow</dt><dd>${e(workflow)}</dd>
<dt>Started by</dt><dd>${e(run.startedBy.name ?? run.startedBy.id)}</dd><dt>Created</dt><dd>${formatTime(run.createdAt)} UTC</dd>
<dt>Updated</dt><dd>${formatTime(run.updatedAt)} UTC</dd><dt>Workspace</dt><dd><code>${e(run.workspace)}</code> (${e(run.layout)})</dd></dl>
<details><summary>Specification</summary><pre>${e(run.spec)}</pre></details>
<h2>Steps</h2><table><thead><tr><th class="num">#</th><th>Step</th><th>Agent</th><th>Status</th><th class="num">Attempt</th><th>Started (UTC)</th><th class="num">Took</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th><th></th></tr></thead>
<tbody>${steps}<tr><td></td><td><b>Total</b></td><td colspan="5"></td><td class="num">${num(sum.tokensIn)}</td><td class="num">${num(sum.tokensOut)}</td><td class="num">${formatCost(sum.costUsd)}</td><td></td></tr></tbody></table>
<h2>Ledger</h2>${ledgerTable(ledgerRows(ledger.lines), ledger.truncated)}`;
}

/** True when a run's pages should reload themselves. */
export function runIsLive(run: Pick<RunView, 'status'>): boolean {
  return !TERMINAL.has(run.status);
}

/** Body of a step's log page. */
export function logBody(
  run: RunView,
  step: StepView,
  log: { text: string; truncated: boolean; missing: boolean },
): string {
  const head = `<p><a href="${runHref(run.id)}">← ${e(run.id)}</a></p><h1>Log of ${e(step.id)} <span class="muted">(attempt ${step.attempt}, ${e(step.agent)})</span></h1>`;
  if (log.missing) return `${head}<p class="muted">No log file yet.</p>`;
  const cut = log.truncated ? '<p class="muted">Showing the end of the log.</p>' : '';
  return `${head}${cut}<pre>${e(log.text)}</pre>`;
}
