/**
 * GET handlers of the runs pages: `/runs`, `/runs/<id>` (steps + ledger) and
 * `/runs/<id>/logs/<step>[?attempt=N]` (the tail of that step's log). Pages of runs that can
 * still change reload themselves every few seconds.
 */
import type { ServerResponse } from 'node:http';
import { hasCode } from '../../errors.ts';
import { newNonce, sendNotice, sendPage } from './pages/layout.ts';
import {
  LIVE_REFRESH_SECONDS,
  listIsLive,
  logBody,
  runBody,
  runIsLive,
  runsListBody,
} from './pages/runs.ts';
import { assertSafeId, decodePathPart, type RunsSource } from './runs-source.ts';
import { readTail, readTailLines } from './tail.ts';

/** How much of a log the page shows, and how many ledger lines. */
const LOG_TAIL_BYTES = 64 * 1024;
const LEDGER_TAIL_LINES = 300;
const LEDGER_TAIL_BYTES = 1024 * 1024;
const LIST_LIMIT = 200;

function page(res: ServerResponse, title: string, body: string, live: boolean): void {
  sendPage(res, 200, {
    title,
    body,
    nonce: newNonce(),
    nav: 'runs',
    ...(live && { refreshSeconds: LIVE_REFRESH_SECONDS }),
  });
}

/** Answers a GET under /runs. */
export async function handleRunsPage(
  runs: RunsSource | undefined,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (!runs) {
    sendNotice(res, 503, 'Runs unavailable', 'This console was started without access to runs.');
    return;
  }
  try {
    const parts = url.pathname.split('/').slice(2).map(decodePathPart);
    if (parts.length === 0 || (parts.length === 1 && parts[0] === '')) {
      const list = await runs.listRuns({ limit: LIST_LIMIT });
      page(res, 'Runs', runsListBody(list), listIsLive(list));
    } else if (parts.length === 1) {
      const run = await runs.getRun(assertSafeId('run', parts[0]!));
      const ledgerFile = await runs.ledgerPath(run.id);
      const ledger = await readTailLines(
        run.workspace,
        ledgerFile,
        LEDGER_TAIL_LINES,
        LEDGER_TAIL_BYTES,
      );
      page(res, run.id, runBody(run, ledger), runIsLive(run));
    } else if (parts.length === 3 && parts[1] === 'logs') {
      await showLog(runs, res, parts[0]!, parts[2]!, url.searchParams.get('attempt'));
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

async function showLog(
  runs: RunsSource,
  res: ServerResponse,
  runId: string,
  stepId: string,
  attemptParam: string | null,
): Promise<void> {
  const run = await runs.getRun(assertSafeId('run', runId));
  const step = run.steps.find((s) => s.id === stepId);
  const attempt = attemptParam === null ? undefined : Number(attemptParam);
  if (!step || (attempt !== undefined && !(Number.isInteger(attempt) && attempt >= 1))) {
    sendNotice(res, 404, 'Not found', 'There is no such step or attempt in this run.');
    return;
  }
  const file = await runs.logPath(run.id, step.id, attempt);
  const log = await readTail(run.workspace, file, LOG_TAIL_BYTES);
  page(res, `${run.id} · ${step.id}`, logBody(run, step, log), runIsLive(run));
}
