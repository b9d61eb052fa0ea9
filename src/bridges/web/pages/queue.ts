/**
 * The queue page (pure rendering): how many jobs wait, run, are delayed, failed and completed,
 * and the newest of each list, every job linked to its run and its step's log. A failed job, or
 * a completed one whose agent exited non-zero (its step failed), has Retry (the run's `retry`,
 * through the chat command path); a job that has not started has Remove. Below 720 px the tables are stacked lists, as every list of the console.
 */
import { escapeHtml as e } from '../outbound.ts';
import { QUEUE_LISTS, type QueueJobView, type QueueListName } from '../queue-source.ts';
import { logHref, relativeTime, runHref } from './runs.ts';

/** Jobs shown per list. */
export const QUEUE_LIST_SIZE = 50;

/** What the page shows: counts, lists, and the outcome of the last action. */
export interface QueueView {
  readonly driver: string;
  readonly counts: Record<QueueListName, number>;
  readonly lists: Record<QueueListName, readonly QueueJobView[]>;
}

const TITLES: Record<QueueListName, string> = {
  waiting: 'Waiting',
  active: 'Active',
  delayed: 'Delayed',
  failed: 'Failed',
  completed: 'Completed',
};

const cell = (label: string, html: string, cls = '') =>
  `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${html}</td>`;

function action(csrf: string, op: 'retry' | 'remove', job: QueueJobView): string {
  const label = op === 'retry' ? 'Retry' : 'Remove';
  const cls = op === 'retry' ? 'btn-primary' : 'btn-danger';
  return `<form method="post" action="/api/queue"><input type="hidden" name="csrf" value="${e(csrf)}"><input type="hidden" name="op" value="${op}"><input type="hidden" name="job" value="${e(job.id)}"><button type="submit" class="btn ${cls}">${label} <span class="skip">job ${e(job.id)}</span></button></form>`;
}

function when(j: QueueJobView, now: number): string {
  if (j.state === 'delayed' && j.availableAt !== undefined)
    return `due ${relativeTime(j.availableAt, now)}`;
  if (j.state === 'active' && j.startedAt !== undefined)
    return `since ${relativeTime(j.startedAt, now)}`;
  if (j.finishedAt !== undefined) return relativeTime(j.finishedAt, now);
  return `queued ${relativeTime(j.createdAt, now)}`;
}

function row(j: QueueJobView, csrf: string, now: number): string {
  const step = j.stepId.split('+task+')[0]!;
  const log = logHref(j.runId, step, j.attempt);
  const agentFailed = j.state === 'completed' && j.exitCode !== undefined && j.exitCode !== 0;
  const error =
    j.error !== undefined
      ? `${j.cancelled ? '<b>cancelled:</b> ' : ''}${e(j.error.slice(0, 300))}`
      : agentFailed
        ? `the agent exited ${j.exitCode}`
        : '';
  const act =
    (j.state === 'failed' && !j.cancelled) || agentFailed
      ? action(csrf, 'retry', j)
      : j.state === 'waiting' || j.state === 'delayed'
        ? action(csrf, 'remove', j)
        : '';
  return `<tr>${cell('Job', `<code>${e(j.id)}</code>`, 'clip')}${cell('Run', `<a href="${runHref(j.runId)}">${e(j.runId)}</a>`, 'nowrap')}${cell('Step', `<span><a href="${e(log)}">${e(j.stepId)}</a> #${j.attempt}</span>`)}${cell('Taken', String(j.attempts))}${cell('When', `<span>${when(j, now)}</span>`, 'nowrap')}${cell('Error', error)}${cell('Action', act)}</tr>`;
}

function list(name: QueueListName, v: QueueView, csrf: string, now: number): string {
  const jobs = v.lists[name];
  const count = v.counts[name];
  const heading = `<h2 id="q-${name}">${TITLES[name]} <span class="muted">(${count.toLocaleString('en-US')})</span></h2>`;
  if (jobs.length === 0)
    return `<section aria-labelledby="q-${name}">${heading}<p class="muted">None.</p></section>`;
  const more =
    count > jobs.length
      ? `<p class="muted">The ${jobs.length} shown first of ${count.toLocaleString('en-US')}.</p>`
      : '';
  return `<section aria-labelledby="q-${name}">${heading}<table class="list" id="jobs-${name}"><thead><tr><th>Job</th><th>Run</th><th>Step</th><th>Taken</th><th>When</th><th>Error</th><th>Action</th></tr></thead><tbody>${jobs.map((j) => row(j, csrf, now)).join('')}</tbody></table>${more}</section>`;
}

/** The page's live part: counts and lists (what the page replaces when runs change). */
export function queueResults(v: QueueView, csrf: string, now = Date.now()): string {
  const summary = QUEUE_LISTS.map(
    (n) =>
      `<li><a href="#q-${n}">${TITLES[n]}</a> <b id="count-${n}">${v.counts[n].toLocaleString('en-US')}</b></li>`,
  ).join('');
  return `<div id="results"><ul class="counts" aria-label="Jobs by state">${summary}</ul>${QUEUE_LISTS.map((n) => list(n, v, csrf, now)).join('')}</div>`;
}

/** Body of the queue page; `flash` is the outcome of the last action. */
export function queueBody(
  v: QueueView,
  csrf: string,
  flash?: { ok: boolean; text: string },
  now = Date.now(),
): string {
  const note = flash
    ? `<p role="status" class="card" id="queue-flash">${flash.ok ? '' : '<b>Refused:</b> '}${e(flash.text)}</p>`
    : '';
  return `<h1>Queue <span class="muted">(${e(v.driver)})</span></h1>${note}${queueResults(v, csrf, now)}`;
}
