/**
 * The run page's controls beside the checkpoint: **Retry failed step** while the run is blocked
 * by a failed step (not paused), **Re-open checkpoint** while its checkpoint has expired and is
 * kept open (`reopen <run>`, approvers), and **Cancel run** while it is live. A plain form posting to
 * `/api/run-action`, which sends the chat commands `retry <run>` and `cancel <run> [reason]`
 * with the person's identity and role, as the checkpoint buttons do.
 */
import { escapeHtml as e } from '../outbound.ts';
import type { RunView } from '../runs-source.ts';
import { runIsLive } from './runs.ts';

/** True when `retry` would run the failed step again: blocked, and not by a pause. */
export function canRetry(run: Pick<RunView, 'status' | 'blocked'>): boolean {
  return run.status === 'blocked' && run.blocked?.kind !== 'paused';
}

/** True when the open checkpoint expired and was kept open: `reopen` gives it a fresh expiry. */
export function canReopen(run: Pick<RunView, 'checkpoint'>): boolean {
  return run.checkpoint?.expiredAt !== undefined;
}

/** What decides the controls shown; the page swaps the form only when it changes. */
export function controlsKey(run: Pick<RunView, 'status' | 'blocked' | 'checkpoint'>): string {
  const reopen = canReopen(run) ? `reopen:${run.checkpoint!.id}` : '';
  return `${run.status}:${canRetry(run) ? 'retry' : ''}:${reopen}`;
}

/** The controls form, or '' when the run is finished. */
export function controlsForm(run: RunView, csrf: string): string {
  if (!runIsLive(run)) return '';
  const retry = canRetry(run)
    ? '<button type="submit" name="action" value="retry" class="btn btn-primary">Retry failed step</button>'
    : '';
  const reopen = canReopen(run)
    ? '<button type="submit" name="action" value="reopen" class="btn btn-primary">Re-open checkpoint</button>'
    : '';
  return `<form id="control" method="post" action="/api/run-action">
<input type="hidden" name="csrf" value="${e(csrf)}"><input type="hidden" name="run" value="${e(run.id)}">
<label for="control-reason">Why <span class="muted">(optional, for Cancel)</span></label>
<input type="text" id="control-reason" name="reason" maxlength="3000">
<div class="buttons">${retry}${reopen}<button type="submit" name="action" value="cancel" class="btn btn-danger">Cancel run</button></div></form>`;
}
