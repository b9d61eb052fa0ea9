/**
 * GET handlers of the runs pages: `/runs` (filters, search, pages), `/runs/events` and
 * `/runs/<id>/events` (live updates), `/runs/<id>` (the run page; `?part=sections` its sections
 * as JSON for the live page), `/runs/<id>/logs/<step>[?attempt=N]` (the log, `&from=B` for what
 * was appended after byte B), `/runs/<id>/diffs/<step>?attempt=N` (what the step changed) and
 * `/runs/<id>/prompts/<step>?attempt=N` (the prompt its agent was given).
 */
import fs from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { finalAnswer } from '../../chatops/final-answer.ts';
import { promptFileBeside } from '../../engine/prompt-file.ts';
import { hasCode, NotFoundError } from '../../errors.ts';
import { sendJson } from '../../http/respond.ts';
import { newNonce, sendNotice, sendPage } from './pages/layout.ts';
import { runBody, runSections, type StepAnswer } from './pages/run-page.ts';
import { RUN_PAGE_SCRIPT, RUNS_LIST_SCRIPT } from './pages/run-scripts.ts';
import { diffBody, logBody, promptBody } from './pages/runs.ts';
import {
  listParams,
  listQuery,
  RUNS_PAGE_SIZE,
  runsListBody,
  runsListResults,
} from './pages/runs-list.ts';
import { ALL_RUNS, type RunEvents } from './run-events.ts';
import { assertSafeId, decodePathPart, type RunsSource, type RunView } from './runs-source.ts';
import { readFrom, readTail, readTailLines } from './tail.ts';

/** How much of a log the page shows, and how many ledger lines. */
const LOG_TAIL_BYTES = 64 * 1024;
const DIFF_BYTES = 2 * 1024 * 1024;
const LEDGER_TAIL_LINES = 300;
const LEDGER_TAIL_BYTES = 1024 * 1024;

/** What the runs routes need. */
export interface RunsRouteContext {
  readonly runs: RunsSource | undefined;
  readonly events: RunEvents;
  readonly csrf: string;
  /**
   * Set for a person signed in through chat: only runs of this workspace (their chat's) are
   * shown; any other is "not found", as in their chat. Unset: every run (the local admin).
   */
  readonly workspace?: string | undefined;
}

/** A run the context may see; NOT_FOUND otherwise (a person sees their chat's workspace only). */
async function visibleRun(
  ctx: RunsRouteContext,
  runs: RunsSource,
  runId: string,
): Promise<RunView> {
  const run = await runs.getRun(assertSafeId('run', runId));
  if (ctx.workspace !== undefined && path.resolve(run.workspace) !== path.resolve(ctx.workspace)) {
    throw new NotFoundError(`no run ${runId} here`);
  }
  return run;
}

function page(
  res: ServerResponse,
  title: string,
  body: string,
  script?: string,
  csrf?: string,
): void {
  sendPage(res, 200, {
    title,
    body,
    nonce: newNonce(),
    nav: 'runs',
    ...(script !== undefined && { script }),
    ...(csrf !== undefined && { csrf }),
  });
}

/** Answers a GET under /runs. */
export async function handleRunsPage(
  ctx: RunsRouteContext,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const { runs } = ctx;
  if (!runs) {
    sendNotice(res, 503, 'Runs unavailable', 'This console was started without access to runs.');
    return;
  }
  try {
    const parts = url.pathname.split('/').slice(2).map(decodePathPart);
    if (parts.length === 0 || (parts.length === 1 && parts[0] === '')) {
      await showList(ctx, runs, res, url);
    } else if (parts.length === 1 && parts[0] === 'events') {
      ctx.events.open(req, res, ALL_RUNS);
    } else if (parts.length === 1) {
      await showRun(ctx, runs, res, parts[0]!, url.searchParams.get('part') === 'sections');
    } else if (parts.length === 2 && parts[1] === 'events') {
      const run = await visibleRun(ctx, runs, parts[0]!);
      ctx.events.open(req, res, run.id);
    } else if (parts.length === 3 && ['logs', 'diffs', 'prompts'].includes(parts[1]!)) {
      const run = await visibleRun(ctx, runs, parts[0]!);
      const step = run.steps.find((s) => s.id === parts[2]);
      const param = url.searchParams.get('attempt');
      const attempt = param === null ? step?.attempt : Number(param);
      if (!step || !Number.isInteger(attempt) || attempt! < 1 || attempt! > step.attempt) {
        sendNotice(res, 404, 'Not found', 'There is no such step or attempt in this run.');
      } else if (parts[1] === 'logs') {
        await showLog(runs, res, run, step.id, attempt!, url.searchParams.get('from'));
      } else if (parts[1] === 'prompts') {
        const log = await runs.logPath(run.id, step.id, attempt!);
        const text = await readTail(
          run.workspace,
          promptFileBeside(log, step.id, attempt!),
          DIFF_BYTES,
        );
        page(res, `${run.id} · ${step.id} prompt`, promptBody(run, step, attempt!, text));
      } else {
        const file = await runs.diffPath(run.id, step.id, attempt!);
        const diff = await readTail(run.workspace, file, DIFF_BYTES);
        page(res, `${run.id} · ${step.id} diff`, diffBody(run, step, attempt!, diff));
      }
    } else {
      sendNotice(res, 404, 'Not found', 'There is no such runs page.');
    }
  } catch (err) {
    // A link planted in the workspace: say which one, show nothing of where it points.
    if (hasCode(err, 'CORRUPT_STATE')) {
      sendNotice(res, 409, 'Unreadable', (err as Error).message);
      return;
    }
    if (!hasCode(err, 'NOT_FOUND') && !hasCode(err, 'INVALID_INPUT')) throw err;
    sendNotice(res, 404, 'Not found', (err as Error).message);
  }
}

async function showList(
  ctx: RunsRouteContext,
  runs: RunsSource,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const scope = ctx.workspace;
  const asJson = url.searchParams.get('part') === 'results';
  const parsed = listParams(url);
  if ('error' in parsed) {
    // A bad filter changes nothing and says what to write instead.
    if (asJson) sendJson(res, 400, { error: parsed.error });
    else sendNotice(res, 400, 'Bad filter', parsed.error);
    return;
  }
  const params = { ...parsed.params, ...(scope !== undefined && { workspace: scope }) };
  if (runs.index) {
    if (asJson) {
      sendJson(res, 200, {
        html: runsListResults(await runs.index.search(listQuery(params)), params),
      });
      return;
    }
    const [found, all] = await Promise.all([
      runs.index.search(listQuery(params)),
      runs.index.facets(),
    ]);
    // A person's filters offer only their workspace: other paths and chats are not theirs to see.
    const facets = scope === undefined ? all : { ...all, workspaces: [scope], chats: [] };
    page(res, 'Runs', runsListBody(found, params, facets), RUNS_LIST_SCRIPT);
    return;
  }
  // Without the index (tests of the pages alone): the newest runs, unfiltered.
  const items = (await runs.listRuns({ limit: RUNS_PAGE_SIZE })).filter(
    (r) => scope === undefined || path.resolve(r.workspace) === path.resolve(scope),
  );
  if (asJson) {
    sendJson(res, 200, { html: runsListResults({ items, total: items.length }, {}) });
    return;
  }
  const none = { workflows: [], workspaces: [], startedBy: [] };
  page(res, 'Runs', runsListBody({ items, total: items.length }, {}, none), RUNS_LIST_SCRIPT);
}

async function showRun(
  ctx: RunsRouteContext,
  runs: RunsSource,
  res: ServerResponse,
  runId: string,
  asJson: boolean,
): Promise<void> {
  const run = await visibleRun(ctx, runs, runId);
  const ledgerFile = await runs.ledgerPath(run.id);
  const ledger = await readTailLines(
    run.workspace,
    ledgerFile,
    LEDGER_TAIL_LINES,
    LEDGER_TAIL_BYTES,
  );
  const diffs = await savedDiffs(runs, run);
  const answers = await stepAnswers(runs, run);
  const sections = runSections(run, { ledger, diffs, answers, now: Date.now() }, ctx.csrf);
  if (asJson) {
    sendJson(res, 200, { ...sections, status: run.status });
    return;
  }
  page(res, run.id, runBody(run, sections), RUN_PAGE_SCRIPT, ctx.csrf);
}

/** The final answer of each step's latest finished attempt (as the chats get it), by step id. */
async function stepAnswers(runs: RunsSource, run: RunView): Promise<Map<string, StepAnswer>> {
  const out = new Map<string, StepAnswer>();
  for (const s of run.steps) {
    if (s.attempt < 1 || (s.status !== 'completed' && s.status !== 'failed')) continue;
    const file = await runs.logPath(run.id, s.id, s.attempt);
    const text = await finalAnswer(run.workspace, file, undefined);
    if (text !== undefined) out.set(s.id, { attempt: s.attempt, text });
  }
  return out;
}

/** The step attempts (latest of each step) whose diff file exists. */
async function savedDiffs(runs: RunsSource, run: RunView): Promise<Set<string>> {
  const out = new Set<string>();
  for (const s of run.steps) {
    if (s.attempt < 1) continue;
    const file = await runs.diffPath(run.id, s.id, s.attempt);
    // lstat: a planted link is not followed here; the diff page opens files without following.
    if (fs.lstatSync(file, { throwIfNoEntry: false })?.isFile()) out.add(`${s.id}-${s.attempt}`);
  }
  return out;
}

async function showLog(
  runs: RunsSource,
  res: ServerResponse,
  run: RunView,
  stepId: string,
  attempt: number,
  from: string | null,
): Promise<void> {
  const step = run.steps.find((s) => s.id === stepId)!;
  const file = await runs.logPath(run.id, step.id, attempt);
  if (from !== null) {
    const offset = Number(from);
    const start = Number.isSafeInteger(offset) && offset >= 0 ? offset : 0;
    const more = await readFrom(run.workspace, file, start, LOG_TAIL_BYTES);
    const live = step.status === 'running' && attempt === step.attempt;
    sendJson(res, 200, { text: more.text, next: more.next, live });
    return;
  }
  const log = await readTail(run.workspace, file, LOG_TAIL_BYTES);
  page(res, `${run.id} · ${step.id}`, logBody(run, step, attempt, log), RUN_PAGE_SCRIPT);
}
