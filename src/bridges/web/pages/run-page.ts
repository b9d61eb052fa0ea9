/**
 * One run's page (pure rendering), in sections the page script swaps when the run changes: the
 * summary (with the PABCD phase strip), the open checkpoint with its Approve / Request changes /
 * Reject form, the steps (marks, times, tokens, cost, log and diff links) and their final answers, the decisions and the
 * feedback given, and the ledger. Every value from a run is escaped.
 */

import { PHASE_NAMES, WORK_PHASES } from '../../../engine/pabcd/phases.ts';
import { personName } from '../../../engine/person-name.ts';
import { escapeHtml as e } from '../outbound.ts';
import type { CheckpointView, RunView, StepView, TelemetryView } from '../runs-source.ts';
import { type LedgerRow, ledgerRows } from './ledger-rows.ts';
import { controlsForm, controlsKey } from './run-controls.ts';
import { answerWords, historySection } from './run-history.ts';
import {
  diffHref,
  formatCost,
  formatDuration,
  formatTime,
  logHref,
  promptHref,
  relativeTime,
  runIsLive,
  statusBadge,
} from './runs.ts';

const num = (n: number): string => n.toLocaleString('en-US');

/** What the page shows besides the run. */
export interface RunPageInput {
  readonly ledger: { lines: readonly string[]; truncated: boolean };
  /** Step attempts with a saved diff, as `<step>-<attempt>`. */
  readonly diffs: ReadonlySet<string>;
  /** Each step's final answer (its latest finished attempt), by step id. */
  readonly answers?: ReadonlyMap<string, StepAnswer>;
  readonly now: number;
}

/** A step's final answer as the chats get it (src/chatops/final-answer.ts). */
export interface StepAnswer {
  readonly attempt: number;
  readonly text: string;
}

/** Longest answer shown on the page; the log has the rest. */
const ANSWER_MAX_CHARS = 3000;

/** The steps' answers, in step order, under the steps table. */
function answersList(run: RunView, input: RunPageInput): string {
  const items = run.steps.flatMap((s) => {
    const a = input.answers?.get(s.id);
    if (a === undefined) return [];
    const cut =
      a.text.length > ANSWER_MAX_CHARS ? `${a.text.slice(0, ANSWER_MAX_CHARS - 1)}…` : a.text;
    const more =
      cut === a.text
        ? ''
        : ` <a href="${logHref(run.id, s.id, a.attempt)}">the whole answer is in the log</a>`;
    return [
      `<li class="answer"><b>💬 ${e(s.id)}</b> <span class="muted">(attempt ${a.attempt})</span><pre>${e(cut)}</pre>${more}</li>`,
    ];
  });
  return items.length === 0
    ? ''
    : `<h3>Answers</h3><ul class="answers" aria-label="The steps' answers">${items.join('')}</ul>`;
}

/** The page's swappable sections; `checkpointKey` changes only when another checkpoint opens. */
export interface RunSections {
  readonly summary: string;
  readonly checkpoint: string;
  /** The answer form, replaced only when `checkpointKey` changes (a half-typed reason stays). */
  readonly answer: string;
  readonly checkpointKey: string;
  /** Retry / Cancel, replaced only when `controlsKey` changes. */
  readonly controls: string;
  readonly controlsKey: string;
  readonly steps: string;
  readonly history: string;
  readonly ledger: string;
}

function phaseStrip(run: RunView): string {
  const p = run.pabcd;
  if (!p) return '';
  const items = WORK_PHASES.map((x) => {
    const current = x === p.phase;
    return `<li${current ? ' aria-current="step"' : ''}>${x} ${e(PHASE_NAMES[x])}${current ? ' (current)' : ''}</li>`;
  }).join('');
  const flags = (
    [
      ['interview', 'interview done'],
      ['auditPassed', 'audit passed'],
      ['checkPassed', 'check passed'],
    ] as const
  )
    .map(([k, label]) => `${label}: ${p.flags[k] ? 'yes' : 'no'}`)
    .join(' · ');
  const where = p.phase === 'IDLE' ? 'Idle' : `In ${p.phase}`;
  return `<h2 id="phases-h">Phases</h2><ol class="phases" aria-labelledby="phases-h">${items}</ol><p>${where} since ${relativeTime(p.since)} · ${flags}</p>`;
}

function summary(run: RunView, now: number): string {
  const notes = [
    run.blocked && `Blocked: ${run.blocked.reason}`,
    run.outcome && `Outcome: ${run.outcome.reason}`,
  ]
    .filter((n): n is string => typeof n === 'string')
    .map((n) => `<p><b>${e(n)}</b></p>`)
    .join('');
  const workflow = run.workflow.name
    ? `${run.workflow.id} (${run.workflow.name})`
    : run.workflow.id;
  return `${notes}<dl class="fields"><dt>Status</dt><dd>${statusBadge(run.status)}</dd><dt>Workflow</dt><dd>${e(workflow)}</dd>
<dt>Started by</dt><dd>${e(personName(run.startedBy))}</dd><dt>Created</dt><dd>${relativeTime(run.createdAt, now)}</dd>
<dt>Updated</dt><dd>${relativeTime(run.updatedAt, now)}</dd><dt>Workspace</dt><dd><code>${e(run.workspace)}</code> (${e(run.layout)})</dd></dl>
<details><summary>Specification</summary><pre>${e(run.spec)}</pre></details>${phaseStrip(run)}`;
}

/** The open checkpoint: what it asks, its policy, and the votes so far (swapped on every change). */
function checkpointInfo(run: RunView, cp: CheckpointView | null, now: number): string {
  if (!cp) {
    return `<p class="muted">${runIsLive(run) ? 'No checkpoint is open.' : 'The run has ended; nothing to answer.'}</p>`;
  }
  const votes = cp.votes.map(
    (v) =>
      `<li>${e(answerWords(v.answer))} by ${e(personName(v.actor))} ${relativeTime(v.at, now)}${v.reason ? `: “${e(v.reason)}”` : ''}</li>`,
  );
  const needs = `${cp.policy.approvals} approval${cp.policy.approvals === 1 ? '' : 's'} needed${cp.policy.fourEyes ? ', four-eyes (not the run starter)' : ''}`;
  const expires = cp.expiredAt
    ? ` · <b>expired</b> ${relativeTime(cp.expiredAt, now)}`
    : cp.expiresAt
      ? ` · expires ${relativeTime(cp.expiresAt, now)}`
      : '';
  const gate = cp.gate
    ? `<p><b>Gate ${e(cp.gate)} did not pass:</b> approving overrides it and needs a reason.</p>`
    : '';
  return `<h3>Checkpoint ${e(cp.id)} <span class="muted">(step ${e(cp.stepId)})</span></h3>
<p>${e(cp.reason)}</p><p class="muted">Opened ${relativeTime(cp.openedAt, now)}${expires} · ${needs}</p>${gate}
${votes.length > 0 ? `<ul>${votes.join('')}</ul>` : ''}`;
}

/** The answer form of the open checkpoint (a plain form: it works without JavaScript). */
function answerForm(run: RunView, cp: CheckpointView | null, csrf: string): string {
  if (!cp) return '';
  const button = (answer: string, action: string, label: string, cls: string) =>
    cp.answers.includes(answer)
      ? `<button type="submit" name="action" value="${action}" class="btn ${cls}">${label}</button>`
      : '';
  return `<form id="answer" method="post" action="/api/run-action" data-checkpoint="${e(cp.id)}">
<input type="hidden" name="csrf" value="${e(csrf)}"><input type="hidden" name="run" value="${e(run.id)}">
<label for="reason">Reason or feedback <span class="muted">(required to request changes or reject)</span></label>
<textarea id="reason" name="reason" maxlength="3000"></textarea>
<div class="buttons">${button('approve', 'approve', 'Approve', 'btn-primary')}${button('loop', 'changes', 'Request changes', '')}${button('reject', 'reject', 'Reject', 'btn-danger')}</div></form>`;
}

function stepRow(run: RunView, s: StepView, i: number, input: RunPageInput): string {
  const live = runIsLive(run);
  const mark =
    run.cursor === i && live
      ? '<span aria-hidden="true">▶ </span><span class="muted">(current)</span> '
      : '';
  const links: string[] = [];
  if (s.attempt > 0) links.push(`<a href="${logHref(run.id, s.id, s.attempt)}">log</a>`);
  if (s.attempt > 0) links.push(`<a href="${promptHref(run.id, s.id, s.attempt)}">prompt</a>`);
  if (input.diffs.has(`${s.id}-${s.attempt}`)) {
    links.push(`<a href="${diffHref(run.id, s.id, s.attempt)}">diff</a>`);
  }
  const t = s.telemetry;
  const error = s.error ? `<div class="muted">${e(s.error)}</div>` : '';
  const cell = (label: string, html: string, cls = '') =>
    `<td data-label="${label}"${cls ? ` class="${cls}"` : ''}>${html}</td>`;
  return `<tr>${cell('#', `${mark}${i + 1}`, 'num')}${cell('Step', `${e(s.id)}${error}`)}${cell('Agent', e(s.agent))}${cell('Status', statusBadge(s.excluded ? 'excluded' : s.status))}${cell('Attempt', String(s.attempt), 'num')}${cell('Started', relativeTime(s.startedAt, input.now), 'nowrap')}${cell('Took', formatDuration(s.startedAt, s.finishedAt, input.now), 'num')}${cell('Tokens in', num(t.tokensIn), 'num')}${cell('Tokens out', num(t.tokensOut), 'num')}${cell('Cost', formatCost(t.costUsd), 'num')}${cell('Links', links.join(' · '))}</tr>`;
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

function stepsTable(run: RunView, input: RunPageInput): string {
  const sum = totals(run.steps);
  const rows = run.steps.map((s, i) => stepRow(run, s, i, input)).join('');
  return `<table class="list" id="steps-table"><thead><tr><th class="num">#</th><th>Step</th><th>Agent</th><th>Status</th><th class="num">Attempt</th><th>Started</th><th class="num">Took</th><th class="num">Tokens in</th><th class="num">Tokens out</th><th class="num">Cost</th><th>Links</th></tr></thead>
<tbody>${rows}<tr><td></td><td data-label="Step"><b>Total</b></td><td></td><td></td><td></td><td></td><td></td><td data-label="Tokens in" class="num">${num(sum.tokensIn)}</td><td data-label="Tokens out" class="num">${num(sum.tokensOut)}</td><td data-label="Cost" class="num">${formatCost(sum.costUsd)}</td><td></td></tr></tbody></table>`;
}

function ledgerTable(rows: readonly LedgerRow[], truncated: boolean): string {
  if (rows.length === 0) return '<p class="muted">The ledger is empty.</p>';
  const shown = truncated
    ? `<p class="muted">The last ${rows.length} lines; earlier ones are not shown.</p>`
    : '';
  // Numbered by line: the engine's seq counts events (several per line), so it skips numbers.
  const body = rows.map(
    (r, i) =>
      `<tr><td data-label="Line" class="num">${i + 1}</td><td data-label="At" class="nowrap">${e(formatTime(r.at))}</td><td data-label="Command">${e(r.command)}</td><td data-label="By">${e(r.actor)}</td><td data-label="Events">${e(r.events)}</td><td data-label="Entry"><details><summary>line (seq ${e(r.seq)})</summary><pre>${e(r.raw)}</pre></details></td></tr>`,
  );
  return `${shown}<table class="list"><thead><tr><th class="num">Line</th><th>At (UTC)</th><th>Command</th><th>By</th><th>Events</th><th>Entry</th></tr></thead><tbody>${body.join('')}</tbody></table>`;
}

/** The page's sections for `run`. */
export function runSections(run: RunView, input: RunPageInput, csrf: string): RunSections {
  return {
    summary: summary(run, input.now),
    checkpoint: checkpointInfo(run, run.checkpoint, input.now),
    answer: answerForm(run, run.checkpoint, csrf),
    checkpointKey: run.checkpoint?.id ?? '',
    controls: controlsForm(run, csrf),
    controlsKey: controlsKey(run),
    steps: stepsTable(run, input) + answersList(run, input),
    history: historySection(run, input.now),
    ledger: ledgerTable(ledgerRows(input.ledger.lines), input.ledger.truncated),
  };
}

/** Body of one run's page. */
export function runBody(run: RunView, s: RunSections): string {
  return `<p><a href="/runs">← Runs</a></p><h1 id="run-id" data-run="${e(run.id)}" data-live="${runIsLive(run) ? 1 : 0}">${e(run.id)}</h1>
<section id="summary" aria-label="Summary">${s.summary}</section>
<h2>Checkpoint</h2><section id="checkpoint" class="card${s.checkpointKey ? ' open' : ''}" data-key="${e(s.checkpointKey)}"><div id="cp-info">${s.checkpoint}</div><div id="cp-answer">${s.answer}</div></section>
<section id="controls" data-key="${e(s.controlsKey)}" aria-label="Run controls">${s.controls}</section>
<p id="answer-result" role="status" aria-live="polite"></p>
<h2>Steps</h2><section id="steps">${s.steps}</section>
<section id="history">${s.history}</section>
<h2>Ledger</h2><section id="ledger">${s.ledger}</section>`;
}
