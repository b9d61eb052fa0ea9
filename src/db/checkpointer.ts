/**
 * WAL checkpoints of a long-lived process's bridge.db on a thread of their own. SQLite's
 * automatic checkpoint runs inside whichever commit crosses 1,000 WAL pages, on the committing
 * thread: in a busy bridge that is the event loop, blocked for two fsyncs and the page copies
 * (tens of milliseconds on a loaded disk; docs/performance.md). Here a worker thread with its own
 * connection runs a PASSIVE checkpoint every second (it never blocks writers or readers) and the
 * main connection's automatic checkpoint is turned off. When the thread cannot start or dies, the
 * automatic checkpoint is turned back on: slower, never unbounded.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Log } from '../log.ts';
import { nativeBindingOption } from '../sqlite-addon.ts';
import type { BridgeDb } from './connection.ts';

/** SQLite's default `wal_autocheckpoint`, restored when the thread is gone. */
const AUTO_CHECKPOINT_PAGES = 1000;

/** Options of {@link startBackgroundCheckpoints}. */
export interface CheckpointerOptions {
  /** Time between checkpoints (default 1 s). */
  intervalMs?: number;
  /** better-sqlite3's entry module for the thread (default: resolved from here). */
  library?: string;
}

/** The running checkpointer. */
export interface Checkpointer {
  /** True while checkpoints run on the thread (false: the automatic ones are back). */
  readonly inBackground: boolean;
  /** Runs a last checkpoint and stops the thread; the automatic checkpoint is back on. */
  close(): Promise<void>;
}

// CommonJS run by the worker thread: open, checkpoint every interval, close on request.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.library);
const opts = { fileMustExist: true };
if (workerData.nativeBinding) opts.nativeBinding = workerData.nativeBinding;
const db = new Database(workerData.file, opts);
db.pragma('busy_timeout = 5000');
const checkpoint = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    parentPort.postMessage({ type: 'failed', message: String((err && err.message) || err) });
  }
};
const timer = setInterval(checkpoint, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
parentPort.postMessage({ type: 'ready' });
`;

/** Where better-sqlite3's JavaScript is, for the thread; null when it cannot be found. */
function libraryPath(): string | null {
  try {
    return createRequire(import.meta.url).resolve('better-sqlite3');
  } catch {
    return null;
  }
}

/**
 * Moves `db`'s WAL checkpoints to a worker thread. Resolves once the thread has its connection
 * open (or has failed to, then checkpoints stay where SQLite puts them and this is logged).
 */
export async function startBackgroundCheckpoints(
  db: BridgeDb,
  log: Pick<Log, 'debug' | 'warn'>,
  opts: CheckpointerOptions = {},
): Promise<Checkpointer> {
  const off = { inBackground: false, close: async () => {} };
  if (db.file === ':memory:') return off;
  const library = opts.library ?? libraryPath();
  if (library === null) {
    log.warn(
      'bridge.db: better-sqlite3 not found for the checkpoint thread; checkpoints stay in commits',
    );
    return off;
  }
  let inBackground = false;
  let closing: Promise<void> | undefined;
  const restore = () => {
    if (!inBackground) return;
    inBackground = false;
    if (db.sqlite.open) db.sqlite.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  };
  const fallBack = (why: string) => {
    if (!inBackground || closing !== undefined) return;
    restore();
    log.warn({ why }, 'bridge.db: checkpoints are back on the main thread');
  };
  const binding = nativeBindingOption().nativeBinding;
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    // It holds one connection and runs a pragma a second: a small heap is plenty.
    resourceLimits: { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 },
    workerData: {
      library,
      file: db.file,
      intervalMs: opts.intervalMs ?? 1000,
      ...(typeof binding === 'string' ? { nativeBinding: binding } : {}),
    },
  });
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const ready = await new Promise<boolean>((resolve) => {
    worker.once('message', (m: { type?: string }) => resolve(m.type === 'ready'));
    worker.once('error', (err) => {
      log.warn({ err }, 'bridge.db: the checkpoint thread did not start');
      resolve(false);
    });
    worker.once('exit', () => resolve(false));
  });
  if (!ready) {
    await worker.terminate();
    return off;
  }
  db.sqlite.pragma('wal_autocheckpoint = 0');
  inBackground = true;
  log.debug({ file: db.file }, 'bridge.db: WAL checkpoints run on their own thread');
  // A failure that repeats every second is said once, until it changes.
  let lastFailure: string | undefined;
  worker.on('message', (m: { type?: string; message?: string }) => {
    if (m.type !== 'failed' || m.message === lastFailure) return;
    lastFailure = m.message;
    log.warn({ err: m.message }, 'bridge.db: a checkpoint failed');
  });
  worker.on('error', (err) => fallBack(`the checkpoint thread failed: ${err.message}`));
  worker.on('exit', () => fallBack('the checkpoint thread exited'));
  worker.unref();
  return {
    get inBackground() {
      return inBackground;
    },
    close() {
      closing ??= (async () => {
        // Back on before the thread goes: no commit may find checkpoints off and nobody doing them.
        restore();
        // Referenced again: otherwise a process with nothing else to do exits mid-close.
        worker.ref();
        worker.postMessage('close');
        await exited;
      })();
      return closing;
    },
  };
}
