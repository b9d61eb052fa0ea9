/**
 * The bridge's end of the control channel: commands from `phasebridge approve|run|…` are
 * committed by the bridge's own orchestrator, so the bridge drives the run and its chats see
 * every change at once. A second bridge on the same home is refused: the socket answering is
 * the proof that one runs.
 */
import fs from 'node:fs';
import net from 'node:net';
import { ConflictError, PhasebridgeError } from '../errors.ts';
import type { Orchestrator } from '../jobs/orchestrator/index.ts';
import type { Log } from '../log.ts';
import { probeBridge } from './client.ts';
import type { ControlEvent, ControlReply, ControlRequest, ToolApprovalHook } from './protocol.ts';
import { controlSocketPath } from './protocol.ts';

/** Largest request line accepted (a spec may be long; nothing else is). */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** A listening control socket. */
export interface ControlServer {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Listens on the home's control socket. Throws ConflictError when another bridge answers there;
 * a stale socket file (no one listening) is replaced.
 */
export async function startControlServer(opts: {
  home: string;
  orchestrator: Orchestrator;
  log: Log;
  /** Tool approvals pushed by the approval MCP server (`toolWait`); refused without it. */
  tools?: ToolApprovalHook;
}): Promise<ControlServer> {
  const socketPath = controlSocketPath(opts.home);
  const other = await probeBridge(socketPath);
  if (other !== null) {
    throw new ConflictError(
      `a bridge already runs on ${opts.home} (pid ${other.pid}, since ${other.startedAt}); stop it first, or give this one another PHASEBRIDGE_HOME`,
    );
  }
  fs.rmSync(socketPath, { force: true });
  const startedAt = new Date().toISOString();
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    serveConnection(socket, opts.orchestrator, startedAt, opts.log, opts.tools);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Created 0600 from the start: no window in which another user could connect.
    const mask = process.umask(0o177);
    try {
      server.listen(socketPath, () => resolve());
    } finally {
      process.umask(mask);
    }
  });
  fs.chmodSync(socketPath, 0o600);
  return {
    path: socketPath,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      fs.rmSync(socketPath, { force: true });
    },
  };
}

function serveConnection(
  socket: net.Socket,
  o: Orchestrator,
  startedAt: string,
  log: Log,
  tools: ToolApprovalHook | undefined,
): void {
  let buffer = '';
  let handled = false;
  socket.setEncoding('utf8');
  socket.on('error', () => socket.destroy());
  socket.on('data', (chunk: string) => {
    if (handled) return;
    buffer += chunk;
    const end = buffer.indexOf('\n');
    if (end < 0) {
      if (buffer.length > MAX_REQUEST_BYTES) socket.destroy();
      return;
    }
    handled = true;
    const line = buffer.slice(0, end);
    void handle(line, socket, o, startedAt, tools).catch((err: unknown) => {
      log.warn({ err }, 'control request failed');
      socket.destroy();
    });
  });
}

async function handle(
  line: string,
  socket: net.Socket,
  o: Orchestrator,
  startedAt: string,
  tools: ToolApprovalHook | undefined,
) {
  const send = (value: ControlReply | ControlEvent): void => {
    if (!socket.destroyed) socket.write(`${JSON.stringify(value)}\n`);
  };
  let request: ControlRequest;
  try {
    request = JSON.parse(line) as ControlRequest;
  } catch {
    send({ ok: false, error: { code: 'INVALID_INPUT', message: 'not a JSON request' } });
    socket.end();
    return;
  }
  if (request.op === 'follow') {
    const offUpdate = o.onUpdate((update) => send({ event: 'update', update }));
    const offProgress = o.onProgress((progress) => send({ event: 'progress', progress }));
    socket.on('close', () => {
      offUpdate();
      offProgress();
    });
    send({ ok: true, op: 'follow' });
    return;
  }
  if (request.op === 'toolWait') {
    await waitForTool(request.id, socket, tools, send);
    return;
  }
  try {
    send(await answer(request, o, startedAt));
  } catch (err) {
    send(failure(err));
  }
  socket.end();
}

async function answer(
  r: ControlRequest,
  o: Orchestrator,
  startedAt: string,
): Promise<ControlReply> {
  switch (r.op) {
    case 'hello':
      return { ok: true, op: 'hello', pid: process.pid, startedAt };
    case 'startRun':
      return { ok: true, op: 'startRun', state: await o.startRun(r.input) };
    case 'command':
      return { ok: true, op: 'command', result: await o.command(r.runId, r.key, r.command) };
    case 'getRun':
      return { ok: true, op: 'getRun', state: await o.getRun(r.runId) };
    default:
      return { ok: false, error: { code: 'INVALID_INPUT', message: 'unknown request' } };
  }
}

/**
 * `toolWait`: the connection stays open until the request is decided, then carries one line.
 * The asker hanging up (its agent gone) ends the wait.
 */
async function waitForTool(
  id: unknown,
  socket: net.Socket,
  tools: ToolApprovalHook | undefined,
  send: (value: ControlReply) => void,
): Promise<void> {
  if (typeof id !== 'string' || id === '' || tools === undefined) {
    send({ ok: false, error: { code: 'INVALID_INPUT', message: 'no tool approvals here' } });
    socket.end();
    return;
  }
  const hangUp = new AbortController();
  socket.on('close', () => hangUp.abort());
  try {
    send({ ok: true, op: 'toolWait', outcome: await tools.awaitDecision(id, hangUp.signal) });
  } catch (err) {
    send(failure(err));
  }
  socket.end();
}

/** A thrown error as a reply: our errors keep code and message; others only say it failed. */
function failure(err: unknown): ControlReply {
  if (err instanceof PhasebridgeError) {
    return { ok: false, error: { code: err.code, message: err.message } };
  }
  return { ok: false, error: { code: 'INTERNAL', message: `the bridge failed: ${String(err)}` } };
}
