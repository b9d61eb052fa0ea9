/** Test helpers shared by the adapter suites: an inbox of inbound events and a recording logger. */
import type { ChannelLogger } from '../../src/bridges/channel.ts';
import type { InboundEvent } from '../../src/bridges/events.ts';

/** Inbound events in arrival order; `next()` waits for the next one. */
export class Inbox {
  readonly #events: InboundEvent[] = [];
  readonly #waiting: ((e: InboundEvent) => void)[] = [];
  /** Everything received so far. */
  readonly all: InboundEvent[] = [];
  /** What `handler` does with each event before it is queued (answer, ask, edit...). */
  onEvent: (event: InboundEvent) => Promise<void> = async () => {};

  /** Records an event and hands it to the next waiter (or queues it). */
  push(event: InboundEvent): void {
    this.all.push(event);
    const waiter = this.#waiting.shift();
    if (waiter) waiter(event);
    else this.#events.push(event);
  }

  /** A channel handler: runs `onEvent`, then pushes the event. */
  readonly handler = async (event: InboundEvent): Promise<void> => {
    try {
      await this.onEvent(event);
    } finally {
      this.push(event);
    }
  };

  /** The next event not yet taken. */
  next(): Promise<InboundEvent> {
    const event = this.#events.shift();
    return event ? Promise.resolve(event) : new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** A logger that keeps what it was told, so tests can read warnings and errors. */
export function recordingLogger(): ChannelLogger & { lines: { level: string; msg?: string }[] } {
  const lines: { level: string; msg?: string }[] = [];
  const at = (level: string) => (_obj: object, msg?: string) => {
    lines.push({ level, ...(msg !== undefined && { msg }) });
  };
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
