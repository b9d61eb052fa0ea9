/**
 * Live activity of running steps: every tick, the new lines of each running step's log (on disk,
 * so a step run by a `phasebridge worker` in another process shows too) are read for the agent's
 * latest activity from its telemetry ("editing src/login.ts", "running npm test"), which goes
 * to the status message through the notifier (coalesced: latest wins, at most one edit per
 * interval, then the channel's pacing). While a step runs, chats whose platform has a typing
 * indicator (`capabilities.typing`) show it, refreshed every TYPING_REFRESH_MS, and no longer
 * once the step ended.
 */
import fs from 'node:fs';
import { openInside } from '../engine/ledger/safe-path.ts';
import type { RunState } from '../engine/model.ts';
import { activityOf } from '../jobs/runner/telemetry/activity.ts';
import { type ChatOpsDeps, channelFor } from './context.ts';
import { PeriodicLook } from './periodic-look.ts';

/** How often "typing…" is sent again: Telegram shows it about 5 s, Discord about 10 s. */
export const TYPING_REFRESH_MS = 4000;
/** On the first look at a log, only its end is read (a resumed bridge, a long log). */
const FIRST_LOOK_BYTES = 65_536;
/** Most bytes read per look (the rest waits for the next look). */
const LOOK_BYTES = 262_144;

interface Watched {
  workspace: string;
  stepId: string;
  attempt: number;
  chats: readonly string[];
  /** The attempt's log, looked up once (it never moves while the attempt runs). */
  logPath?: string;
  /** Where the next look reads from (the start of a line, after the first look). */
  offset?: number;
  shown?: string;
  typedAt: Map<string, number>;
}

/** Tells the status message what the agent does; shows "typing…" while a step runs. */
export class ActivityWatch {
  readonly #deps: ChatOpsDeps;
  readonly #looks: PeriodicLook;
  readonly #show: (runId: string, stepId: string, text: string) => void;
  readonly #runs = new Map<string, Watched>();

  /** `show` puts an activity line in the run's status message (Notifier.progress). */
  constructor(
    deps: ChatOpsDeps,
    intervalMs: number,
    show: (runId: string, stepId: string, text: string) => void,
  ) {
    this.#deps = deps;
    this.#looks = new PeriodicLook(intervalMs, () => this.tick());
    this.#show = show;
  }

  /** Starts the periodic looks. */
  start(): void {
    this.#looks.start();
  }

  /** Stops the looks and waits for the one in progress. */
  async stop(): Promise<void> {
    await this.#looks.stop();
    this.#runs.clear();
  }

  /**
   * A run changed: watch its running step (a new attempt starts afresh), or stop watching it.
   * Synchronous, so no "typing…" is sent for a step once its end was seen.
   */
  track(state: RunState, chats: readonly string[]): void {
    const step =
      state.status === 'active' ? state.steps.find((s) => s.status === 'running') : undefined;
    if (step === undefined) {
      this.#runs.delete(state.id);
      return;
    }
    const known = this.#runs.get(state.id);
    if (known && known.stepId === step.id && known.attempt === step.attempt) {
      known.chats = chats;
      return;
    }
    this.#runs.set(state.id, {
      workspace: state.workspace,
      stepId: step.id,
      attempt: step.attempt,
      chats,
      typedAt: new Map(),
    });
  }

  /** One look at every watched run; one run's failure never stops the others. */
  async tick(): Promise<void> {
    for (const [runId, w] of [...this.#runs]) {
      try {
        this.#typing(runId, w);
        await this.#look(runId, w);
      } catch (err) {
        this.#deps.log.debug({ err, runId }, 'chatops: step activity not read');
      }
    }
  }

  #typing(runId: string, w: Watched): void {
    const now = Date.now();
    for (const chat of w.chats) {
      const channel = channelFor(this.#deps, chat);
      if (!channel?.capabilities.typing || !channel.typing) continue;
      if (now - (w.typedAt.get(chat) ?? 0) < TYPING_REFRESH_MS) continue;
      w.typedAt.set(chat, now);
      channel
        .typing(chat)
        .catch((err: unknown) =>
          this.#deps.log.debug({ err, runId, chat }, 'chatops: typing not shown'),
        );
    }
  }

  async #look(runId: string, w: Watched): Promise<void> {
    // Looked up once per attempt: the lookup loads the run, too much for every look.
    w.logPath ??= await this.#deps.orchestrator.logPath(runId, w.stepId, w.attempt);
    // The run may have moved on while the path was looked up.
    if (this.#runs.get(runId) !== w) return;
    const text = readFrom(w, w.logPath);
    if (text === undefined) return;
    let latest: string | undefined;
    for (const line of text.split('\n')) latest = activityOf(line, w.workspace) ?? latest;
    if (latest === undefined || latest === w.shown) return;
    w.shown = latest;
    this.#show(runId, w.stepId, latest);
  }
}

/**
 * The whole lines the log gained since the watched offset (moving it on); undefined when none.
 * Reading up to a newline keeps lines (and UTF-8 characters) whole across looks.
 */
function readFrom(w: Watched, logPath: string): string | undefined {
  let fd: number;
  try {
    fd = openInside(w.workspace, logPath, fs.constants.O_RDONLY);
  } catch {
    return undefined; // not written yet
  }
  try {
    const { size } = fs.fstatSync(fd);
    if (w.offset === undefined || w.offset > size) w.offset = Math.max(0, size - FIRST_LOOK_BYTES);
    const length = Math.min(size - w.offset, LOOK_BYTES);
    if (length <= 0) return undefined;
    const buf = Buffer.alloc(length);
    const got = fs.readSync(fd, buf, 0, length, w.offset);
    const end = buf.lastIndexOf(0x0a, got - 1);
    if (end < 0) {
      // No line ended yet; a line longer than one look is skipped.
      if (got === LOOK_BYTES) w.offset += got;
      return undefined;
    }
    w.offset += end + 1;
    return buf.subarray(0, end + 1).toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}
