/**
 * The queue page's routes: GET `/queue` (`?part=results`: its live part as JSON) and POST
 * `/api/queue` (`op=retry|remove`, `job=<id>`). Both need the admin role; a refused action is
 * answered 403 and audited under the person. Retry is the run's `retry` through the chat command
 * path (the engine decides, every chat following the run sees it); Remove goes to the driver.
 */
import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { describeError, hasCode } from '../../errors.ts';
import { BASE_HEADERS, sendJson } from '../../http/respond.ts';
import type { Flash } from './admin-routes.ts';
import type { ConsoleContext } from './console-routes.ts';
import { type ConsoleActor, parseBody } from './inbound.ts';
import { newNonce, sendNotice, sendPage } from './pages/layout.ts';
import { QUEUE_LIST_SIZE, type QueueView, queueBody, queueResults } from './pages/queue.ts';
import { RUNS_LIST_SCRIPT } from './pages/run-scripts.ts';
import { QUEUE_LISTS, type QueueSource } from './queue-source.ts';
import { handleRunAction } from './run-action.ts';
import type { Session } from './session.ts';

/** POST /api/queue */
const queueActionBody = z.object({
  op: z.enum(['retry', 'remove']),
  job: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,199}:[A-Za-z0-9._+-]{1,200}:\d{1,6}$/),
});

async function viewOf(queue: QueueSource): Promise<QueueView> {
  const [counts, ...lists] = await Promise.all([
    queue.counts(),
    ...QUEUE_LISTS.map((s) => queue.list(s, QUEUE_LIST_SIZE)),
  ]);
  return {
    driver: queue.driver,
    counts,
    lists: Object.fromEntries(QUEUE_LISTS.map((s, i) => [s, lists[i]!])) as QueueView['lists'],
  };
}

/** Answers GET /queue for an admin. */
export async function handleQueuePage(
  queue: QueueSource | undefined,
  flash: Flash,
  session: Session,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  if (!queue) {
    sendNotice(res, 503, 'Queue unavailable', 'This console was started without the job queue.');
    return;
  }
  const view = await viewOf(queue);
  if (url.searchParams.get('part') === 'results') {
    sendJson(res, 200, { html: queueResults(view, session.csrfToken) });
    return;
  }
  sendPage(res, 200, {
    title: 'Queue',
    body: queueBody(view, session.csrfToken, flash.take(session.id)),
    nonce: newNonce(),
    nav: 'queue',
    // The runs' change feed: every job that is queued, taken or finished changes its run.
    script: RUNS_LIST_SCRIPT,
  });
}

/** The actor ref the audit names for a console actor. */
const refOf = (who: ConsoleActor) => `${who.user.platform}:${who.user.id}`;

/**
 * Applies POST /api/queue. `admin` says whether the session may; when not, the answer is 403 and
 * the refusal is audited. Done or refused by the queue, the outcome is flashed and a plain form
 * goes back to the page; a script gets JSON.
 */
export async function postQueueAction(
  ctx: ConsoleContext & { readonly queue: QueueSource | undefined },
  session: Session,
  who: ConsoleActor,
  admin: boolean,
  form: Record<string, string>,
  res: ServerResponse,
  plainForm: boolean,
): Promise<void> {
  const body = parseBody(queueActionBody, form);
  const queue = ctx.queue;
  if (!queue) {
    sendJson(res, 503, { error: 'This console was started without the job queue.' });
    return;
  }
  const actor = refOf(who);
  if (!admin) {
    await queue.audit(actor, `queue:${body.op}`, body.job, 'refused', 'needs the admin role');
    const text = `You are not allowed to ${body.op} queue jobs: that needs the admin role.`;
    if (plainForm) sendNotice(res, 403, 'Admins only', text);
    else sendJson(res, 403, { error: text });
    return;
  }
  let ok = true;
  let text: string;
  try {
    if (body.op === 'remove') {
      text = await queue.remove(actor, body.job);
    } else {
      const run = body.job.split(':')[0]!;
      await queue.audit(actor, 'queue:retry', body.job, 'allowed', `retry ${run}`);
      const done = await handleRunAction(ctx, { run, action: 'retry' }, who);
      text =
        done.status === 200 ? (done.replies ?? []).join(' ') || `retry ${run} sent` : done.error;
      ok = done.status === 200;
    }
  } catch (err) {
    if (!hasCode(err, 'INVALID_INPUT') && !hasCode(err, 'NOT_FOUND')) throw err;
    ok = false;
    text = describeError(err).chatReply;
  }
  ctx.flash.set(session.id, ok, text);
  if (plainForm) res.writeHead(303, { ...BASE_HEADERS, location: '/queue' }).end();
  else sendJson(res, ok ? 200 : 409, ok ? { ok, text } : { error: text });
}
