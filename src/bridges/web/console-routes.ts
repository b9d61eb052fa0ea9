/**
 * The console's HTTP surface, mounted at `/`: login, the console page, its event stream, file
 * downloads, the POST endpoints (a command or a reply may carry files: multipart/form-data,
 * uploads.ts), and the runs pages (runs-routes.ts). Every request but the login link needs the
 * session; every POST needs the Origin check and the CSRF token.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { UnauthorizedError } from '../../errors.ts';
import { BASE_HEADERS, requestUrl, sendJson } from '../../http/respond.ts';
import type { ChannelLogger } from '../channel.ts';
import type { InboundEvent, InboundFile } from '../events.ts';
import { type Flash, handleAdminPage, postAccessEdit } from './admin-routes.ts';
import type { AdminSource } from './admin-source.ts';
import { apiError } from './errors.ts';
import {
  checkWrite,
  type GuardOptions,
  handleLogin,
  originAllowed,
  readForm,
  requireHttps,
  requireSession,
  showLoginConfirm,
} from './guard.ts';
import type { FileShelf, HeldMessage, MessageHistory } from './history.ts';
import {
  actorOfSession,
  commandBody,
  eventKey,
  parseBody,
  pressBody,
  replyBody,
  toButtonPress,
  toCommand,
  toReply,
} from './inbound.ts';
import { multipartBoundary } from './multipart.ts';
import { consolePage } from './pages/console.ts';
import { newNonce, sendNotice, sendPage } from './pages/layout.ts';
import type { PromptBook } from './prompts.ts';
import { handleQueuePage, postQueueAction } from './queue-routes.ts';
import type { QueueSource } from './queue-source.ts';
import { handleRunAction, runActionBody } from './run-action.ts';
import type { RunEvents } from './run-events.ts';
import { handleRunsPage } from './runs-routes.ts';
import type { RunsSource } from './runs-source.ts';
import type { Session } from './session.ts';
import type { SseEvent, SseHub } from './sse.ts';
import { noFilesHere, type ReceivedUpload, type UploadShelf } from './uploads.ts';

/** What the routes share with the channel. */
/** One chat adapter as the console shows it. */
export interface ChatAdapterState {
  readonly name: string;
  readonly ok: boolean;
  readonly detail?: string;
}

/** One job worker as the console shows it (BullMQ's worker registry). */
export interface WorkerState {
  /** `host/pid`. */
  readonly name: string;
  /** Labels, engines, running jobs. */
  readonly detail: string;
}

/** What the console routes need from the channel. */
export interface ConsoleContext extends GuardOptions {
  readonly history: MessageHistory;
  readonly files: FileShelf;
  /** Files posted with a command or reply, held while it is handled. */
  readonly uploads: UploadShelf;
  readonly hub: SseHub;
  readonly prompts: PromptBook;
  readonly runs: RunsSource | undefined;
  /** The runs pages' live streams. */
  readonly runEvents: RunEvents;
  /** The Access and Audit pages' source (bridge.db); without it they say so. */
  readonly admin: AdminSource | undefined;
  /** The queue page's source (the job queue and the audit log); without it the page says so. */
  readonly queue: QueueSource | undefined;
  readonly flash: Flash;
  readonly log: ChannelLogger;
  /** The chat adapters' states for the page's header (none before the bridge sets them). */
  chats(): readonly ChatAdapterState[];
  /** Registered job workers, or null when the queue has no registry (embedded queue). */
  workers(): readonly WorkerState[] | null;
  /** True between start() and stop(). */
  running(): boolean;
  /** Shows what the user typed in the chat. */
  echo(text: string): void;
  /** Hands an inbound event to the handler; rejects (after logging) when the handler fails. */
  emit(event: InboundEvent): Promise<void>;
}

/** The SSE event of a held message. */
export function messageEvent(m: HeldMessage): SseEvent {
  return {
    event: 'msg',
    id: m.version,
    data: { ref: m.ref, n: m.n, author: m.author, html: m.html },
  };
}

/** The request handler of the console. */
export async function handleConsoleRequest(
  ctx: ConsoleContext,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (!requireHttps(ctx, req, res)) return;
  const url = requestUrl(req);
  const token = url.searchParams.get('token');
  if (req.method === 'GET' && url.pathname === '/' && token !== null) {
    await showLoginConfirm(ctx, req, res, token);
    return;
  }
  if (req.method === 'POST' && url.pathname === '/login') {
    await handleLogin(ctx, req, res);
    return;
  }
  const session = await requireSession(ctx, req, res);
  if (!session) return;
  const read = req.method === 'GET' || req.method === 'HEAD';
  if (read && url.pathname === '/') return showConsole(ctx, session, res);
  if (req.method === 'GET' && url.pathname === '/events') {
    if (ctx.running()) return openEvents(ctx, session, req, res, url);
    sendJson(res, 503, { error: 'The console is not running.' });
    return;
  }
  if (read && url.pathname.startsWith('/files/')) return sendHeldFile(ctx, res, url.pathname);
  if (read && (url.pathname === '/runs' || url.pathname.startsWith('/runs/'))) {
    const workspace = await runsScope(ctx, session);
    const runsCtx = {
      runs: ctx.runs,
      events: ctx.runEvents,
      csrf: session.csrfToken,
      ...(workspace !== null && { workspace }),
    };
    return handleRunsPage(runsCtx, req, res, url);
  }
  if (read && url.pathname === '/queue') {
    if (!(await adminAllowed(ctx, session))) {
      sendNotice(res, 403, 'Admins only', 'The Queue page needs the admin role.');
      return;
    }
    return handleQueuePage(ctx.queue, ctx.flash, session, res, url);
  }
  if (url.pathname.startsWith('/admin/') || url.pathname === '/api/access') {
    if (!(await adminAllowed(ctx, session))) {
      sendNotice(res, 403, 'Admins only', 'The Access and Audit pages need the admin role.');
      return;
    }
  }
  if (read && url.pathname.startsWith('/admin/')) {
    return handleAdminPage(ctx.admin, ctx.flash, session, res, url);
  }
  if (req.method === 'POST' && url.pathname.startsWith('/api/')) {
    return handlePost(ctx, session, req, res, url.pathname);
  }
  sendNotice(res, 404, 'Not found', 'There is no such page in the console.');
}

/** The workspace a session's runs pages show (null: every run); a person sees their chat's. */
async function runsScope(ctx: ConsoleContext, session: Session): Promise<string | null> {
  if (session.person === null) return null;
  // Without bridge.db there is no person at all; deny by default all the same.
  return ctx.admin ? ctx.admin.workspaceOf(session.person) : '';
}

/** The local admin always; a person signed in through chat only with the admin role there. */
async function adminAllowed(ctx: ConsoleContext, session: Session): Promise<boolean> {
  if (session.person === null) return true;
  return (await ctx.admin?.isAdmin(session.person)) ?? false;
}

function showConsole(ctx: ConsoleContext, session: Session, res: ServerResponse): void {
  const page = consolePage({
    messages: ctx.history.all(),
    version: ctx.history.version,
    csrf: session.csrfToken,
    nonce: newNonce(),
    chats: ctx.chats(),
    workers: ctx.workers(),
  });
  sendPage(res, 200, page);
}

function openEvents(
  ctx: ConsoleContext,
  session: Session,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): void {
  // EventSource resends the last id it saw when it reconnects; the page's version otherwise.
  const since = Number(req.headers['last-event-id'] ?? url.searchParams.get('since') ?? 0);
  const tab = url.searchParams.get('tab') ?? undefined;
  const replay = ctx.history.changedSince(Number.isFinite(since) ? since : 0).map(messageEvent);
  const prompts = ctx.prompts
    .ofSession(session.id)
    .map((p): SseEvent => ({ event: 'prompt', data: { ref: p.ref, text: p.text } }));
  // The chat's messages go to this stream only while its session lasts (a revoke ends it).
  const cookie = req.headers.cookie;
  const stillValid = () => ctx.sessions.isLive(cookie);
  ctx.hub.open(req, res, { sessionId: session.id, tab }, [...replay, ...prompts], stillValid);
}

function sendHeldFile(ctx: ConsoleContext, res: ServerResponse, pathname: string): void {
  const file = ctx.files.get(pathname.slice('/files/'.length));
  if (!file) {
    sendNotice(res, 404, 'File not found', 'The console no longer keeps this file.');
    return;
  }
  res.writeHead(200, {
    ...BASE_HEADERS,
    'content-type': 'application/octet-stream',
    'content-length': file.data.byteLength,
    'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`,
  });
  res.end(file.data);
}

/** POSTs that may carry files (multipart/form-data): a command and a reply. */
const UPLOAD_PATHS = new Set(['/api/command', '/api/reply']);

/**
 * Reads a POST's fields: JSON or urlencoded, or multipart with files on the paths that take
 * them. An upload is checked for its Origin before its body is read and for its CSRF token
 * (header, or the form's `csrf` field sent before the files) before any file byte is kept.
 */
async function readPost(
  ctx: ConsoleContext,
  session: Session,
  req: IncomingMessage,
  pathname: string,
): Promise<{ form: Record<string, string>; upload?: ReceivedUpload }> {
  const boundary = multipartBoundary(req.headers['content-type']);
  if (boundary === undefined) return { form: await readForm(req) };
  if (!UPLOAD_PATHS.has(pathname)) throw noFilesHere();
  if (!originAllowed(req, ctx.allowedOrigins)) {
    throw new UnauthorizedError('Cross-origin request refused.');
  }
  const header = req.headers['x-csrf-token'];
  const upload = await ctx.uploads.receive(req, boundary, (fields) =>
    ctx.sessions.checkCsrf(session, typeof header === 'string' ? header : fields.csrf),
  );
  return { form: upload.fields, upload };
}

async function handlePost(
  ctx: ConsoleContext,
  session: Session,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<void> {
  let post: Awaited<ReturnType<typeof readPost>>;
  try {
    post = await readPost(ctx, session, req, pathname);
  } catch (err) {
    const { status, message } = apiError(err);
    // An upload refused part-way: the rest of its body is not read, so the connection closes.
    if (!req.complete) res.setHeader('connection', 'close');
    sendJson(res, status, { error: message });
    return;
  }
  const { form, upload } = post;
  try {
    if (!checkWrite(ctx, session, req, res, form)) return;
    if (!ctx.running()) {
      sendJson(res, 503, { error: 'The console is not running.' });
      return;
    }
    await answerPost(ctx, session, req, res, pathname, form, upload?.files ?? []);
  } finally {
    upload?.release();
  }
}

async function answerPost(
  ctx: ConsoleContext,
  session: Session,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  form: Record<string, string>,
  files: readonly InboundFile[],
): Promise<void> {
  // A plain form post (no JavaScript) goes back to the page; scripts get JSON.
  const plainForm = !(req.headers.accept ?? '').includes('application/json');
  try {
    if (pathname === '/api/access')
      return await postAccessEdit(ctx.admin, ctx.flash, session, form, res);
    if (pathname === '/api/queue') {
      const admin = await adminAllowed(ctx, session);
      const who = actorOfSession(session.person);
      return await postQueueAction(ctx, session, who, admin, form, res, plainForm);
    }
    const outcome = await dispatchPost(ctx, session, pathname, form, files);
    if (outcome.status !== 200) sendJson(res, outcome.status, { error: outcome.error });
    else if (plainForm)
      res.writeHead(303, { ...BASE_HEADERS, location: outcome.back ?? '/' }).end();
    else sendJson(res, 200, { ok: true, ...(outcome.replies && { replies: outcome.replies }) });
  } catch (err) {
    const { status, message } = apiError(err);
    sendJson(res, status, { error: message });
  }
}

/** What the chat shows of what was typed, with the names of the files sent with it. */
function echoOf(typed: string, files: readonly InboundFile[]): string {
  return files.length === 0 ? typed : `${typed}\n📎 ${files.map((f) => f.name).join(', ')}`;
}

/** What a POST did: 200 (with the page to go back to, and the chat's answers), or why not. */
export type PostOutcome =
  | { status: 200; back?: string; replies?: string[] }
  | { status: 400 | 404 | 409; error: string };

async function dispatchPost(
  ctx: ConsoleContext,
  session: Session,
  pathname: string,
  form: Record<string, string>,
  files: readonly InboundFile[],
): Promise<PostOutcome> {
  const who = actorOfSession(session.person);
  switch (pathname) {
    case '/api/command': {
      const body = parseBody(commandBody, form);
      ctx.echo(`› ${echoOf(body.text, files)}`);
      const command = toCommand(body.text, eventKey('cmd', body.key), files, who);
      if (command) await ctx.emit(command);
      return { status: 200 };
    }
    case '/api/press': {
      const body = parseBody(pressBody, form);
      const held = ctx.history.get(body.ref);
      if (!held?.buttons.has(body.token)) {
        return { status: 409, error: 'This button is no longer active.' };
      }
      const press = { s: session.id, t: body.tab, m: body.ref };
      await ctx.emit(toButtonPress(body.token, body.ref, press, eventKey('press', body.key), who));
      return { status: 200 };
    }
    case '/api/reply': {
      const body = parseBody(replyBody, form);
      const prompt = ctx.prompts.find(body.ref, session.id);
      if (!prompt && ctx.history.get(body.ref)) {
        // A reply to a run's message (its status or checkpoint): guidance for the run.
        ctx.echo(`› reply: ${echoOf(body.text, files)}`);
        await ctx.emit(toReply(body.text, body.ref, eventKey('reply', body.key), files, who));
        return { status: 200 };
      }
      if (!prompt) return { status: 404, error: 'This question is no longer open.' };
      if (files.length > 0) return { status: 400, error: noFilesHere().message };
      ctx.echo(`› reason: ${body.text}`);
      await ctx.emit(toReply(body.text, prompt.ref, eventKey('reply', body.key), [], who));
      ctx.prompts.remove(prompt.ref);
      ctx.hub.sendTo(session.id, undefined, { event: 'prompt-done', data: { ref: prompt.ref } });
      return { status: 200 };
    }
    case '/api/run-action':
      return handleRunAction(ctx, parseBody(runActionBody, form), who);
    default:
      return { status: 404, error: 'No such action.' };
  }
}
