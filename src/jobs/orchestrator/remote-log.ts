/**
 * Agent output of a worker that does not share the workspace (git mode) travels back as `log`
 * reports: the worker tails its own copy of the step log and sends what is new, in order, as
 * base64 chunks tagged with their byte offset; the bridge appends to the run's log file only
 * the part past the file's size, so a chunk heard twice (two listening processes, a
 * redelivery) is written once, and a gap (a bridge that was down) is filled with a marker of exactly its length, so the file's
 * size stays equal to the worker's offset and later chunks still line up.
 * Bounded: at most {@link LOG_CHUNK_BYTES} per report, one report per tick, and the runner caps
 * the log itself (8 MiB by default).
 */
import fs from 'node:fs';
import path from 'node:path';
import { openInside, STATE_FILE_MODE } from '../../engine/ledger/safe-path.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { JobSpec } from '../queue/port.ts';
import { parseQueueStepId } from './job-payload.ts';
import { remoteAgentLog, remoteRowOf, setRemotePid } from './remote-registry.ts';
import { stepLogPath } from './run-files.ts';
import { taskLogPath } from './task-jobs.ts';

/** Largest chunk of one `log` report. */
export const LOG_CHUNK_BYTES = 64 * 1024;
/** How often the worker looks for new output. */
export const LOG_TICK_MS = 200;

/** A `log` report's content. */
export interface LogChunk {
  offset: number;
  data: string;
}

/** Tails `file` while a job runs and hands each new chunk to `send`; `stop` sends the rest. */
export class LogShipper {
  readonly #file: string;
  readonly #send: (chunk: LogChunk) => void;
  readonly #timer: NodeJS.Timeout;
  #offset = 0;

  constructor(file: string, send: (chunk: LogChunk) => void) {
    this.#file = file;
    this.#send = send;
    this.#timer = setInterval(() => this.#pump(1), LOG_TICK_MS);
  }

  /** Sends what is left and stops. */
  stop(): void {
    clearInterval(this.#timer);
    this.#pump(Number.POSITIVE_INFINITY);
  }

  #pump(maxChunks: number): void {
    let fd: number;
    try {
      fd = fs.openSync(this.#file, 'r');
    } catch {
      return; // not created yet
    }
    try {
      const buf = Buffer.alloc(LOG_CHUNK_BYTES);
      for (let i = 0; i < maxChunks; i++) {
        const n = fs.readSync(fd, buf, 0, LOG_CHUNK_BYTES, this.#offset);
        if (n <= 0) return;
        this.#send({ offset: this.#offset, data: buf.subarray(0, n).toString('base64') });
        this.#offset += n;
      }
    } finally {
      fs.closeSync(fd);
    }
  }
}

/**
 * Appends a shipped chunk to the bridge's copy of the log (inside `workspace`, no link
 * followed). Returns what happened: written, a duplicate skipped, or a gap marked first.
 */
export function appendLogChunk(
  workspace: string,
  file: string,
  chunk: LogChunk,
): 'written' | 'duplicate' | 'gap' {
  const { O_WRONLY, O_APPEND, O_CREAT } = fs.constants;
  const fd = openInside(
    path.resolve(workspace),
    file,
    O_WRONLY | O_APPEND | O_CREAT,
    STATE_FILE_MODE,
  );
  try {
    const size = fs.fstatSync(fd).size;
    const data = Buffer.from(chunk.data, 'base64');
    if (chunk.offset + data.length <= size) return 'duplicate';
    let gap = false;
    let body = data;
    if (chunk.offset > size) {
      gap = true;
      fs.writeSync(fd, gapFiller(chunk.offset - size));
    } else if (chunk.offset < size) {
      body = data.subarray(size - chunk.offset); // the part not written yet
    }
    fs.writeSync(fd, body);
    return gap ? 'gap' : 'written';
  } finally {
    fs.closeSync(fd);
  }
}

/** `bytes` bytes saying that much of the log was not received (dots when too short for words). */
export function gapFiller(bytes: number): Buffer {
  const note = `\n[phasebridge] ${bytes} bytes of this log were not received\n`;
  if (note.length > bytes) return Buffer.alloc(bytes, '.');
  return Buffer.concat([Buffer.alloc(bytes - note.length, '.'), Buffer.from(note)]);
}

/**
 * The bridge's writer of shipped logs: chunks of one run are written in arrival order (the
 * run's workspace is looked up once per run), each into the log file of its job's attempt.
 */
export class RemoteLogs {
  readonly #deps: {
    workspaceOf(runId: string): Promise<string>;
    log: Log;
  };
  readonly #chains = new Map<string, Promise<void>>();
  /** Agent log path (or none) per job key, while its chunks arrive. */
  readonly #agentLogs = new Map<string, string | undefined>();

  constructor(deps: { workspaceOf(runId: string): Promise<string>; log: Log }) {
    this.#deps = deps;
  }

  /**
   * Queues a chunk of job `job`'s output for its log file and, for a codemachine job whose
   * registry row the bridge holds (git mode), for its `agent-*.log` too: the same bytes at the
   * same offsets (the worker's log starts with the prompt), so both files stay equal.
   */
  write(job: Pick<JobSpec, 'runId' | 'stepId' | 'attempt' | 'payload'>, chunk: LogChunk): void {
    const { stepId, kind, taskId } = parseQueueStepId(job.stepId);
    this.#queue(job.runId, 'writing a log chunk failed', async () => {
      const ws = await this.#deps.workspaceOf(job.runId);
      const file =
        kind === 'task'
          ? taskLogPath(ws, job.runId, stepId, taskId!, job.attempt)
          : stepLogPath(ws, job.runId, stepId, job.attempt, kind);
      appendLogChunk(ws, file, chunk);
      const agentLog = this.#agentLog(ws, job);
      if (agentLog !== undefined) appendLogChunk(ws, agentLog, chunk);
    });
  }

  /** Records the pid of a remote job's agent in its registry row (in order with its chunks). */
  started(job: Pick<JobSpec, 'runId' | 'payload'>, pid: number): void {
    const id = remoteRowOf(job);
    if (id === undefined) return;
    this.#queue(job.runId, 'recording an agent pid failed', async () => {
      setRemotePid(await this.#deps.workspaceOf(job.runId), id, pid);
    });
  }

  /** The job's agent log path, looked up once per job (registry.db is opened for it). */
  #agentLog(
    ws: string,
    job: Pick<JobSpec, 'runId' | 'stepId' | 'attempt' | 'payload'>,
  ): string | undefined {
    if (remoteRowOf(job) === undefined) return undefined;
    const key = `${job.runId}\n${job.stepId}\n${job.attempt}`;
    if (!this.#agentLogs.has(key)) this.#agentLogs.set(key, remoteAgentLog(ws, job));
    return this.#agentLogs.get(key);
  }

  /** Runs `task` after the run's earlier ones (arrival order); failures are logged only. */
  #queue(runId: string, what: string, task: () => Promise<void>): void {
    const prev = this.#chains.get(runId) ?? Promise.resolve();
    const next = prev.then(async () => {
      try {
        await task();
      } catch (err) {
        this.#deps.log.warn({ runId, err: errorMessage(err) }, what);
      }
    });
    this.#chains.set(runId, next);
    void next.then(() => {
      if (this.#chains.get(runId) === next) this.#chains.delete(runId);
    });
  }

  /** Resolves once the chunks of `runId` heard so far are written. */
  async settled(runId: string): Promise<void> {
    await this.#chains.get(runId);
    // Its jobs' outcomes are being landed: their agent log paths are not needed again.
    for (const key of this.#agentLogs.keys()) {
      if (key.startsWith(`${runId}\n`)) this.#agentLogs.delete(key);
    }
  }
}
