/**
 * Shared pieces of the runs pages (pure rendering): times (exact, relative, durations), cost,
 * status badges (text, never colour alone), and the log and diff pages. Every value from a run
 * is escaped.
 */
import { escapeHtml as e } from '../outbound.ts';
import type { RunView, StepView } from '../runs-source.ts';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** `2026-11-29 14:30:00` (UTC) from an ISO string or epoch ms; '' when absent. */
export function formatTime(t: string | number | null | undefined): string {
  if (t === undefined || t === null || t === '') return '';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? String(t) : d.toISOString().slice(0, 19).replace('T', ' ');
}

/** `just now`, `5 min ago`, `3 h ago`, `2 days ago` (or `in …` for the future). */
export function relativeWords(ms: number, now: number): string {
  const diff = Math.round((now - ms) / 1000);
  const abs = Math.abs(diff);
  const say = (n: number, unit: string) => (diff >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`);
  if (abs < 45) return 'just now';
  if (abs < 3600) return say(Math.max(1, Math.round(abs / 60)), 'min');
  if (abs < 86_400) return say(Math.round(abs / 3600), 'h');
  const days = Math.round(abs / 86_400);
  return say(days, days === 1 ? 'day' : 'days');
}

/** A `<time>` with relative words and the exact UTC time on hover (and for screen readers). */
export function relativeTime(t: string | number | null | undefined, now = Date.now()): string {
  if (t === undefined || t === null || t === '') return '';
  const ms = typeof t === 'number' ? t : Date.parse(t);
  if (Number.isNaN(ms)) return e(String(t));
  const exact = `${formatTime(ms)} UTC`;
  return `<time datetime="${new Date(ms).toISOString()}" title="${exact}">${relativeWords(ms, now)}</time>`;
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

/** A status as a text badge (the colour only adds to the word). */
export function statusBadge(s: string, label = s): string {
  return `<span class="st st-${e(s)}">${e(label)}</span>`;
}

/** The run page's path. */
export const runHref = (id: string): string => `/runs/${encodeURIComponent(id)}`;

/** A step attempt's log page. */
export const logHref = (runId: string, stepId: string, attempt?: number): string =>
  `${runHref(runId)}/logs/${encodeURIComponent(stepId)}${attempt === undefined ? '' : `?attempt=${attempt}`}`;

/** A step attempt's prompt page (what its agent was given). */
export const promptHref = (runId: string, stepId: string, attempt: number): string =>
  `${runHref(runId)}/prompts/${encodeURIComponent(stepId)}?attempt=${attempt}`;

/** Body of a step attempt's prompt page: exactly the text its agent was given. */
export function promptBody(
  run: RunView,
  step: StepView,
  attempt: number,
  prompt: { text: string; truncated: boolean; missing: boolean },
): string {
  const head = `<p><a href="${runHref(run.id)}">← Run ${e(run.id)}</a></p><h1>Prompt of ${e(step.id)} <span class="muted">(attempt ${attempt}, ${e(step.agent)})</span></h1>`;
  if (prompt.missing) {
    return `${head}<p class="muted" id="prompt-empty">No prompt on record for this attempt (it ran before prompts were kept, or has not started).</p>`;
  }
  const cut = prompt.truncated ? '<p class="muted">Showing the end of the prompt.</p>' : '';
  return `${head}${cut}<pre id="prompt" tabindex="0" aria-label="Prompt">${e(prompt.text)}</pre>`;
}

/** A step attempt's diff page. */
export const diffHref = (runId: string, stepId: string, attempt: number): string =>
  `${runHref(runId)}/diffs/${encodeURIComponent(stepId)}?attempt=${attempt}`;

/** True when a run can still change. */
export function runIsLive(run: Pick<RunView, 'status'>): boolean {
  return !TERMINAL.has(run.status);
}

/** Body of a step's log page; a running step's log is followed by the page script. */
export function logBody(
  run: RunView,
  step: StepView,
  attempt: number,
  log: { text: string; truncated: boolean; missing: boolean; size: number },
): string {
  const live = step.status === 'running' && attempt === step.attempt;
  const head = `<p><a href="${runHref(run.id)}">← Run ${e(run.id)}</a></p><h1>Log of ${e(step.id)} <span class="muted">(attempt ${attempt}, ${e(step.agent)})</span></h1>`;
  const state = live
    ? '<p id="log-state" role="status">Live: new output appears below as the step writes it.</p>'
    : `<p id="log-state" role="status" class="muted">The step is ${e(step.status)}; this log is complete.</p>`;
  const cut = log.truncated ? '<p class="muted">Showing the end of the log.</p>' : '';
  const text = log.missing ? '' : e(log.text);
  const empty = log.missing ? '<p class="muted" id="log-empty">No log file yet.</p>' : '';
  return `${head}${state}${cut}${empty}<pre id="log" tabindex="0" aria-label="Log output" data-offset="${log.size}" data-live="${live ? 1 : 0}">${text}</pre>`;
}

/** Body of a step's diff page: a git diff with added and removed lines marked (+/- stay). */
export function diffBody(
  run: RunView,
  step: StepView,
  attempt: number,
  diff: { text: string; missing: boolean },
): string {
  const head = `<p><a href="${runHref(run.id)}">← Run ${e(run.id)}</a></p><h1>Changes of ${e(step.id)} <span class="muted">(attempt ${attempt})</span></h1>`;
  if (diff.missing) {
    return `${head}<p>No diff was saved for this attempt: the workspace is not a git work tree, or the step has not finished.</p>`;
  }
  if (diff.text.trim() === '') return `${head}<p>This attempt changed no files.</p>`;
  const lines = diff.text.split('\n').map((l) => {
    const cls =
      l.startsWith('+') && !l.startsWith('+++')
        ? 'add'
        : l.startsWith('-') && !l.startsWith('---')
          ? 'del'
          : l.startsWith('@@')
            ? 'hunk'
            : '';
    return cls ? `<span class="${cls}">${e(l)}</span>` : e(l);
  });
  return `${head}<pre class="diff" tabindex="0" aria-label="Diff">${lines.join('\n')}</pre>`;
}
