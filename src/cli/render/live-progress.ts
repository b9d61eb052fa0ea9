/**
 * Live progress of one run while the CLI drives it. On a TTY: the step list with a spinner,
 * redrawn in place. Otherwise: one plain line per phase change and per progress text.
 */
import type { RunEvent } from '../../engine/events.ts';
import type { RunState } from '../../engine/model.ts';
import { eventLines } from './event-lines.ts';
import { renderLiveSteps } from './step-list.ts';

/** A committed update of a run (the Orchestrator's RunUpdate). */
export interface LiveUpdate {
  runId: string;
  state: RunState;
  events: readonly RunEvent[];
}

/** A `::progress` text of a running step (the Orchestrator's StepProgress). */
export interface LiveStepProgress {
  runId: string;
  stepId: string;
  text: string;
}

/** Where the view is written: process.stdout, or a collecting stream in tests. */
export interface ProgressOutput {
  write(chunk: string): unknown;
  columns?: number;
}

/** Options of LiveProgress. */
export interface LiveProgressOptions {
  /** Redraw in place with a spinner (stdout is a terminal) or print plain lines. */
  tty: boolean;
  clock?: () => Date;
  /** Spinner frame interval on a TTY (default 100 ms). */
  frameMs?: number;
}

const CLEAR_BELOW = '\x1b[0J';

/** Shows one run's progress; updates of other runs are ignored. */
export class LiveProgress {
  readonly #out: ProgressOutput;
  readonly #tty: boolean;
  readonly #clock: () => Date;
  readonly #frameMs: number;
  #runId: string | undefined;
  /** Updates that came before the run id was known (a start commits before it returns). */
  #early: LiveUpdate[] = [];
  #earlyProgress: LiveStepProgress[] = [];
  #state: RunState | undefined;
  readonly #progress = new Map<string, string>();
  #frame = 0;
  #drawn = 0;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(out: ProgressOutput, opts: LiveProgressOptions) {
    this.#out = out;
    this.#tty = opts.tty;
    this.#clock = opts.clock ?? (() => new Date());
    this.#frameMs = opts.frameMs ?? 100;
  }

  /** Starts showing `runId`, replaying what arrived for it before. */
  follow(runId: string, current?: RunState): void {
    this.#runId = runId;
    const early = this.#early.filter((u) => u.runId === runId);
    const earlyProgress = this.#earlyProgress.filter((p) => p.runId === runId);
    this.#early = [];
    this.#earlyProgress = [];
    if (current && early.length === 0) this.#state = current;
    for (const u of early) this.update(u);
    for (const p of earlyProgress) this.progress(p);
    if (this.#tty && !this.#stopped) {
      this.#timer = setInterval(() => this.#redraw(true), this.#frameMs);
      this.#timer.unref();
      this.#redraw(false);
    }
  }

  /** Takes a committed update (listener of Orchestrator.onUpdate). */
  update(u: LiveUpdate): void {
    if (this.#stopped) return;
    if (this.#runId === undefined) {
      this.#early.push(u);
      return;
    }
    if (u.runId !== this.#runId) return;
    if (this.#state !== undefined && u.state.seq < this.#state.seq) return;
    this.#state = u.state;
    for (const e of u.events) {
      if (e.type === 'stepStarted' || e.type === 'stepQueued') this.#progress.delete(e.stepId);
    }
    if (this.#tty) this.#redraw(false);
    else for (const line of eventLines(u.events, u.state)) this.#out.write(`${line}\n`);
  }

  /** Takes a progress text (listener of Orchestrator.onProgress). */
  progress(p: LiveStepProgress): void {
    if (this.#stopped) return;
    if (this.#runId === undefined) {
      this.#earlyProgress.push(p);
      return;
    }
    if (p.runId !== this.#runId) return;
    this.#progress.set(p.stepId, p.text);
    if (this.#tty) this.#redraw(false);
    else this.#out.write(`${p.stepId}: ${p.text}\n`);
  }

  /** Draws the last frame (on a TTY) and stops; later updates are ignored. */
  stop(): void {
    if (this.#stopped) return;
    if (this.#timer) clearInterval(this.#timer);
    if (this.#tty) this.#redraw(false);
    this.#stopped = true;
  }

  #redraw(tick: boolean): void {
    if (this.#stopped || this.#state === undefined) return;
    if (tick) this.#frame++;
    // A pseudo-terminal may report 0 columns: then assume a common width.
    const columns =
      this.#out.columns !== undefined && this.#out.columns > 0 ? this.#out.columns : 100;
    const width = Math.max(20, columns - 1);
    const lines = renderLiveSteps(this.#state, this.#progress, this.#frame, this.#clock(), width);
    // Move to the first line drawn last time, clear below, draw again.
    const up = this.#drawn > 0 ? `\x1b[${this.#drawn}F` : '';
    this.#out.write(`${up}${CLEAR_BELOW}${lines.join('\n')}\n`);
    this.#drawn = lines.length;
  }
}
