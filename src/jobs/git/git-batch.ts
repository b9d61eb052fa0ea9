/**
 * One long-lived `git cat-file --batch-check` per repository, for the commit probes a worker
 * makes on every job: each probe as its own process is a spawn, which blocks the event loop for
 * milliseconds (tens on a loaded machine), and the protocol lets one process answer query after
 * query. git looks in its pack folder again when an object is missing, so commits fetched or
 * pushed after the process started are found. The process ends when idle for IDLE_MS (its stdin
 * is closed), and is started again on the next probe; if it fails, that probe falls back to a
 * process of its own (commitsOf).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { COMMIT_RE, commitsOf } from './run-git.ts';

/** How long an unused probe process is kept. */
const IDLE_MS = 5_000;

/** A running `cat-file --batch-check` and its answered lines. */
interface Batch {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  waiting: (() => void) | null;
  dead: boolean;
}

/** Commit probes of one repository through one long-lived git process. */
export class GitBatchCheck {
  readonly #cwd: string;
  #batch: Batch | null = null;
  #tail: Promise<unknown> = Promise.resolve();
  #idle: NodeJS.Timeout | undefined;

  constructor(cwd: string) {
    this.#cwd = cwd;
  }

  /** The commit id each of `revs` names in the repository, or null (as commitsOf). */
  commitsOf(revs: readonly string[]): Promise<(string | null)[]> {
    const next = this.#tail.then(() => this.#ask(revs));
    this.#tail = next.catch(() => {});
    return next;
  }

  /** Ends the process now (the next probe starts one again). */
  close(): void {
    clearTimeout(this.#idle);
    this.#batch?.child.stdin.end();
    this.#batch = null;
  }

  async #ask(revs: readonly string[]): Promise<(string | null)[]> {
    clearTimeout(this.#idle);
    // A name with a newline would split into two queries: never a commit (and never sent).
    const ok = revs.map((r) => !/[\n\r]/.test(r));
    const query = revs.filter((_, i) => ok[i]);
    let answers: string[];
    try {
      answers = await this.#query(query);
    } catch {
      this.close();
      return commitsOf(this.#cwd, revs);
    }
    this.#idle = setTimeout(() => this.close(), IDLE_MS);
    this.#idle.unref();
    let line = 0;
    return ok.map((good) => {
      if (!good) return null;
      const [id, type] = (answers[line++] ?? '').split(' ');
      return type === 'commit' && id !== undefined && COMMIT_RE.test(id) ? id : null;
    });
  }

  /** Sends one query line per rev and resolves with as many answer lines. */
  async #query(revs: readonly string[]): Promise<string[]> {
    if (revs.length === 0) return [];
    const b = this.#batch ?? this.#start();
    if (b.dead) throw new Error('git cat-file ended');
    b.child.stdin.write(revs.map((r) => `${r}^{commit}\n`).join(''));
    while (b.lines.length < revs.length) {
      if (b.dead) throw new Error('git cat-file ended');
      await new Promise<void>((resolve) => {
        b.waiting = resolve;
      });
    }
    return b.lines.splice(0, revs.length);
  }

  #start(): Batch {
    const child = spawn('git', ['cat-file', '--batch-check=%(objectname) %(objecttype)'], {
      cwd: this.#cwd,
      env: { ...process.env, GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const b: Batch = { child, lines: [], waiting: null, dead: false };
    let partial = '';
    const wake = () => {
      const w = b.waiting;
      b.waiting = null;
      w?.();
    };
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      b.lines.push(...parts);
      wake();
    });
    const end = () => {
      b.dead = true;
      if (this.#batch === b) this.#batch = null;
      wake();
    };
    child.on('error', end);
    child.on('close', end);
    child.stdin.on('error', () => {}); // it died: 'close' says so
    child.stderr.resume();
    // An idle probe process never keeps the worker alive.
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr]) {
      (s as unknown as { unref?: () => void }).unref?.();
    }
    this.#batch = b;
    return b;
  }
}
