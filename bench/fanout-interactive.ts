/**
 * The interactive figures of bench/fanout.ts: a person's presses and `/run`s in two private
 * chats, beside the fan-out or in a quiet bridge, through whatever Channel the scenario built
 * (the outbox's, or the adapter straight for `--mode direct`).
 */
import type { Channel, Urgency } from '../src/bridges/channel.ts';
import { prose } from '../src/bridges/render-text.ts';
import { RateLimitedError } from '../src/errors.ts';

/** How the person acts. */
export interface InteractiveOptions {
  /** Presses (and `/run`s) per scenario. */
  presses: number;
  /** From the checkpoint message appearing to the press. */
  reactionMs: number;
  /** Between one interaction's end and the next. */
  thinkMs: number;
  /** The modelled agent's time between `/run` and its answer. */
  agentMs: number;
  pressChat: number;
  runChat: number;
  /** The urgency a call the person waits for is sent with (`--no-interactive`: as before). */
  waited: (then: Urgency) => Urgency;
}

/** p50 and max of a list of durations (ms). */
export function summary(ms: readonly number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    n: sorted.length,
    p50: sorted[Math.floor(sorted.length / 2)] ?? null,
    max: sorted.at(-1) ?? null,
  };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The two loops; `failures` counts calls refused with a 429 past the adapter's own wait. */
export class InteractiveLoops {
  readonly #o: InteractiveOptions;
  /** Calls of the current scenario refused (`--mode direct` has no outbox to wait for them). */
  failures = 0;

  constructor(options: InteractiveOptions) {
    this.#o = options;
  }

  /**
   * A checkpoint message to the private chat, a person's reaction time, then the press's edit
   * of it, `presses` times; returns press → edit answered (ms) per press.
   */
  async pressLoop(channel: Channel): Promise<number[]> {
    const { presses, reactionMs, thinkMs, pressChat, waited } = this.#o;
    const took: number[] = [];
    for (let i = 0; i < presses; i++) {
      try {
        const ref = await channel.send(`telegram:${pressChat}`, {
          text: prose(`checkpoint ${i}`),
          urgency: 'decision',
        });
        await sleep(reactionMs);
        const t = performance.now();
        await channel.edit(ref, {
          text: prose(`checkpoint ${i}: approved`),
          urgency: waited('decision'),
        });
        took.push(Math.round(performance.now() - t));
      } catch (err) {
        this.#failed(err);
      }
      if (i < presses - 1) await sleep(thinkMs);
    }
    return took;
  }

  /**
   * `/run` in a private chat, as chatops answers it there (the status message, its edit when
   * the step starts; after the agent's time the answer, the checkpoint and the status edit),
   * `presses` times; returns /run → checkpoint answered, minus the agent's time (ms), per run.
   */
  async runLoop(channel: Channel): Promise<number[]> {
    const { presses, thinkMs, agentMs, runChat, waited } = this.#o;
    const chat = `telegram:${runChat}`;
    const took: number[] = [];
    for (let i = 0; i < presses; i++) {
      const t = performance.now();
      const calls: Promise<void>[] = [];
      // Every call gets its handler at once, so a refused one is counted, never unhandled.
      const track = <T>(call: Promise<T>): Promise<T> => {
        calls.push(
          call.then(
            () => undefined,
            (err: unknown) => this.#failed(err),
          ),
        );
        return call;
      };
      try {
        const status = await track(
          channel.send(chat, { text: prose(`run ${i}`), urgency: waited('notice') }),
        );
        track(channel.edit(status, { text: prose(`run ${i}: plan running`), urgency: 'status' }));
        await sleep(agentMs);
        track(channel.send(chat, { text: prose(`💬 plan ${i}`), urgency: waited('decision') }));
        await track(
          channel.send(chat, {
            text: prose(`checkpoint plan:1 of run ${i}`),
            urgency: waited('decision'),
          }),
        );
        took.push(Math.round(performance.now() - t - agentMs));
        track(channel.edit(status, { text: prose(`run ${i}: awaiting`), urgency: 'notice' }));
      } catch {
        // Counted by its tracked copy.
      }
      await Promise.all(calls);
      if (i < presses - 1) await sleep(thinkMs);
    }
    return took;
  }

  /** A 429 past the adapter's own wait is counted; anything else is a bench error. */
  #failed(err: unknown): void {
    if (!(err instanceof RateLimitedError)) throw err;
    this.failures++;
  }
}
