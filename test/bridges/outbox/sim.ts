/**
 * A simulated clock for the outbox and a recording chat platform on it: each call takes a
 * given latency of simulated time, and the platform keeps what it received and when.
 */
import type { Channel, ChannelCapabilities, Platform } from '../../../src/bridges/channel.ts';
import type { OutgoingMessage } from '../../../src/bridges/messages.ts';
import type { PlatformLimits } from '../../../src/bridges/outbox/limits.ts';
import { Outbox, type OutboxTimers } from '../../../src/bridges/outbox/outbox.ts';
import { OutboxStore } from '../../../src/bridges/outbox/store.ts';
import { plainTextOf } from '../../../src/bridges/render-text.ts';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { PlatformError } from '../../../src/errors.ts';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Timers that fire only when the test advances time. */
export class SimClock implements OutboxTimers {
  #now = 0;
  #seq = 0;
  #timers: Timer[] = [];

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): unknown {
    const t = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn };
    this.#timers.push(t);
    return t;
  }

  clearTimeout(handle: unknown): void {
    this.#timers = this.#timers.filter((t) => t !== handle);
  }

  /** Lets promise callbacks run (several hops: awaits chain). */
  async settle(): Promise<void> {
    for (let i = 0; i < 20; i++) await new Promise<void>((r) => setImmediate(r));
  }

  /** Fires timers in time order up to `until` (settling after each), then sets the time. */
  async runUntil(until: number): Promise<void> {
    await this.settle();
    for (;;) {
      this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#timers[0];
      if (!next || next.at > until) break;
      this.#timers.shift();
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await this.settle();
    }
    this.#now = Math.max(this.#now, until);
  }

  /**
   * Fires the timers due by `until` at once, without letting promise callbacks run in between:
   * what happens when a timer fires in the same turn as the code just before this call.
   */
  fireNow(until: number): void {
    this.#timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
    while (this.#timers[0] && this.#timers[0].at <= until) {
      const next = this.#timers.shift()!;
      this.#now = Math.max(this.#now, next.at);
      next.fn();
    }
    this.#now = Math.max(this.#now, until);
  }

  /** Runs until no timer is left (or `limit` is reached). */
  async runAll(limit = 10_000_000): Promise<void> {
    await this.settle();
    while (this.#timers.length > 0 && this.#now < limit) {
      const next = Math.min(...this.#timers.map((t) => t.at));
      await this.runUntil(next);
    }
  }
}

/** One call the simulated platform received. */
export interface SimCall {
  readonly kind: 'send' | 'edit';
  readonly target: string;
  readonly text: string;
  readonly urgency: string | undefined;
  readonly startedAt: number;
  finishedAt?: number;
}

const CAPS: ChannelCapabilities = {
  edits: true,
  buttons: true,
  threads: false,
  modals: false,
  forceReply: false,
  maxTextLength: 4096,
  maxButtonDataBytes: 64,
  privateAnswers: false,
  files: false,
  durableMessages: true,
};

/** A chat platform on the simulated clock: every call takes `latency(i)` ms. */
export class SimPlatform implements Channel {
  readonly platform: Platform;
  readonly capabilities = CAPS;
  readonly calls: SimCall[] = [];
  /** Chats whose calls fail for good (a bot removed from the chat). */
  readonly forbidden = new Set<string>();
  readonly #clock: SimClock;
  readonly #latency: (i: number) => number;
  #next = 1;

  constructor(platform: Platform, clock: SimClock, latency: (i: number) => number = () => 20) {
    this.platform = platform;
    this.#clock = clock;
    this.#latency = latency;
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}

  send(chatRef: string, message: OutgoingMessage): Promise<string> {
    return this.#call('send', chatRef, message, () => `${chatRef}/${this.#next++}`);
  }

  async edit(messageRef: string, message: OutgoingMessage): Promise<void> {
    await this.#call('edit', messageRef, message, () => '');
  }

  async answer(): Promise<void> {}
  async askForReason(): Promise<string> {
    return '';
  }
  async sendFile(): Promise<string> {
    return '';
  }

  #call(
    kind: 'send' | 'edit',
    target: string,
    message: OutgoingMessage,
    result: () => string,
  ): Promise<string> {
    const call: SimCall = {
      kind,
      target,
      text: plainTextOf(message.text),
      urgency: message.urgency,
      startedAt: this.#clock.now(),
    };
    this.calls.push(call);
    return new Promise((resolve, reject) => {
      this.#clock.setTimeout(
        () => {
          call.finishedAt = this.#clock.now();
          if (this.forbidden.has(target.split('/')[0]!)) {
            reject(
              new PlatformError(this.platform, 'Forbidden: bot was kicked from the group chat'),
            );
          } else resolve(result());
        },
        this.#latency(this.calls.length - 1),
      );
    });
  }
}

/**
 * A real Outbox over a fresh in-memory bridge.db, delivering through `platform` on `clock`'s
 * time, started. The database goes into `opened` for the test's afterEach to close.
 */
export async function simOutbox(
  platform: SimPlatform,
  clock: SimClock,
  limits: PlatformLimits,
  opened: BridgeDb[],
): Promise<{ db: BridgeDb; outbox: Outbox }> {
  const db = openBridgeDb({ file: ':memory:' });
  opened.push(db);
  await migrateToLatest(db);
  const outbox = new Outbox({
    store: OutboxStore.on(db.sqlite, () => clock.now()),
    inner: platform,
    limits,
    timers: clock,
  });
  outbox.start();
  return { db, outbox };
}
