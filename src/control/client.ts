/**
 * The CLI's end of the control channel. `RemoteRuns` offers the calls the CLI makes of an
 * Orchestrator (start, command, updates, wait until idle), carried out by the running bridge.
 */
import net from 'node:net';
import type { RunState } from '../engine/model.ts';
import type { CommitResult } from '../engine/store/types.ts';
import { PhasebridgeError, ResourceError } from '../errors.ts';
import type {
  CommandInput,
  RunUpdate,
  StartRunInput,
  StepProgress,
} from '../jobs/orchestrator/index.ts';
import type {
  BridgeHello,
  ControlEvent,
  ControlReply,
  ControlRequest,
  ToolWaitOutcome,
} from './protocol.ts';
import { controlSocketPath } from './protocol.ts';

/** How long the CLI waits for a bridge to accept the connection before working alone. */
const CONNECT_TIMEOUT_MS = 2000;

/** The bridge answering on `socketPath`, or null when none listens there. */
export async function probeBridge(socketPath: string): Promise<BridgeHello | null> {
  try {
    const reply = await request(socketPath, { op: 'hello' });
    return reply.ok && reply.op === 'hello' ? { pid: reply.pid, startedAt: reply.startedAt } : null;
  } catch (err) {
    if (isNobodyThere(err)) return null;
    throw err;
  }
}

/** Sends one request and resolves with its one-line reply. */
function request(socketPath: string, req: ControlRequest): Promise<ControlReply> {
  return new Promise((resolve, reject) => {
    const socket = net.createConnection(socketPath);
    let buffer = '';
    let done = false;
    const finish = (err: Error | null, reply?: ControlReply) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(reply!);
    };
    const timer = setTimeout(
      () => finish(Object.assign(new Error('no answer'), { code: 'ETIMEDOUT' })),
      CONNECT_TIMEOUT_MS,
    );
    socket.setEncoding('utf8');
    socket.on('connect', () => {
      clearTimeout(timer);
      socket.write(`${JSON.stringify(req)}\n`);
    });
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end >= 0) finish(null, JSON.parse(buffer.slice(0, end)) as ControlReply);
    });
    socket.on('error', (err) => finish(connectionLost(err)));
    socket.on('close', () => finish(connectionLost(undefined)));
  });
}

/**
 * A connection that broke mid-request (reset, or closed with no answer) as the one line a user
 * can act on; a connect failure (nobody there) is returned unchanged for the fallback.
 */
function connectionLost(err: NodeJS.ErrnoException | undefined): Error {
  if (err !== undefined && err.code !== 'ECONNRESET' && err.code !== 'EPIPE') return err;
  return new ResourceError('the bridge restarted while answering: run the command again', {
    ...(err === undefined ? {} : { cause: err }),
  });
}

/**
 * Asks the bridge on `socketPath` to show tool approval `id` and waits (at most `timeoutMs`)
 * until it is decided. Never throws: 'unavailable' when no bridge answers, the connection
 * drops or the time runs out (the caller then looks in bridge.db itself).
 */
export function awaitToolDecision(
  socketPath: string,
  id: string,
  timeoutMs: number,
): Promise<ToolWaitOutcome | 'unavailable'> {
  return new Promise((resolve) => {
    const socket = net.createConnection(socketPath);
    let buffer = '';
    const finish = (outcome: ToolWaitOutcome | 'unavailable') => {
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => finish('unavailable'), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('connect', () => socket.write(`${JSON.stringify({ op: 'toolWait', id })}\n`));
    socket.on('data', (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf('\n');
      if (end < 0) return;
      try {
        const reply = JSON.parse(buffer.slice(0, end)) as ControlReply;
        finish(reply.ok && reply.op === 'toolWait' ? reply.outcome : 'unavailable');
      } catch {
        finish('unavailable');
      }
    });
    socket.on('error', () => finish('unavailable'));
    socket.on('close', () => finish('unavailable'));
  });
}

function isNobodyThere(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ETIMEDOUT';
}

/** A refusal from the bridge as the same error the CLI would throw alone. */
function raise(reply: ControlReply): never {
  if (reply.ok) throw new Error(`unexpected reply ${reply.op}`);
  if (reply.error.code === 'INTERNAL') throw new Error(reply.error.message);
  throw new PhasebridgeError(reply.error.code, reply.error.message);
}

/** The runs of a bridge, driven through its control socket. */
export class RemoteRuns {
  readonly socketPath: string;
  readonly bridge: BridgeHello;
  readonly #updates = new Set<(u: RunUpdate) => void>();
  readonly #progress = new Set<(p: StepProgress) => void>();
  #follow: net.Socket | null = null;

  private constructor(socketPath: string, bridge: BridgeHello) {
    this.socketPath = socketPath;
    this.bridge = bridge;
  }

  /** Connects to the bridge of `home`; null when none runs there. */
  static async connect(home: string): Promise<RemoteRuns | null> {
    const socketPath = controlSocketPath(home);
    const hello = await probeBridge(socketPath);
    return hello === null ? null : new RemoteRuns(socketPath, hello);
  }

  /** Starts a run in the bridge. */
  async startRun(input: StartRunInput): Promise<RunState> {
    const reply = await request(this.socketPath, { op: 'startRun', input });
    if (!reply.ok || reply.op !== 'startRun') raise(reply);
    return reply.state;
  }

  /** Commits a command in the bridge. */
  async command(runId: string, key: string, command: CommandInput): Promise<CommitResult> {
    const reply = await request(this.socketPath, { op: 'command', runId, key, command });
    if (!reply.ok || reply.op !== 'command') raise(reply);
    return reply.result;
  }

  /** A run's state as the bridge reads it. */
  async getRun(runId: string): Promise<RunState> {
    const reply = await request(this.socketPath, { op: 'getRun', runId });
    if (!reply.ok || reply.op !== 'getRun') raise(reply);
    return reply.state;
  }

  /** Streams the bridge's updates to the listeners until `close()`. */
  async follow(): Promise<void> {
    if (this.#follow) return;
    await new Promise<void>((resolve, reject) => {
      const socket = net.createConnection(this.socketPath);
      this.#follow = socket;
      let buffer = '';
      let acked = false;
      socket.setEncoding('utf8');
      socket.on('connect', () => socket.write(`${JSON.stringify({ op: 'follow' })}\n`));
      socket.on('error', reject);
      socket.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n'); end >= 0; end = buffer.indexOf('\n')) {
          const line = buffer.slice(0, end);
          buffer = buffer.slice(end + 1);
          if (!acked) {
            acked = true;
            resolve();
            continue;
          }
          this.#dispatch(JSON.parse(line) as ControlEvent);
        }
      });
      socket.on('close', () => {
        this.#follow = null;
        if (!acked) reject(new Error('the bridge closed the follow connection'));
      });
    });
  }

  /** Subscribes to updates (after `follow()`); returns the unsubscribe function. */
  onUpdate(listener: (u: RunUpdate) => void): () => void {
    this.#updates.add(listener);
    return () => this.#updates.delete(listener);
  }

  /** Subscribes to progress lines (after `follow()`); returns the unsubscribe function. */
  onProgress(listener: (p: StepProgress) => void): () => void {
    this.#progress.add(listener);
    return () => this.#progress.delete(listener);
  }

  /** Resolves when the run waits for a human, is blocked or ended (needs `follow()`). */
  waitUntilIdle(runId: string): Promise<RunState> {
    return new Promise((resolve, reject) => {
      const off = this.onUpdate((u) => {
        if (u.runId === runId && u.state.status !== 'active') {
          off();
          resolve(u.state);
        }
      });
      // An update before the subscription is not lost: the bridge's current state is asked too.
      this.getRun(runId).then((state) => {
        if (state.status !== 'active') {
          off();
          resolve(state);
        }
      }, reject);
      this.#follow?.once('close', () => reject(new Error('the bridge stopped')));
    });
  }

  /** Closes the follow connection. */
  close(): void {
    this.#follow?.destroy();
    this.#follow = null;
  }

  #dispatch(e: ControlEvent): void {
    if (e.event === 'update') {
      for (const l of [...this.#updates]) l(e.update);
    } else {
      for (const l of [...this.#progress]) l(e.progress);
    }
  }
}
