/**
 * Names of Slack people seen by id only (issue 29): a message event (thread reply, mention, DM)
 * carries the user id and nothing else, while presses and commands carry the handle. Names are
 * learnt from every payload that has one and, for an id never seen named, asked of `users.info`
 * once: at most LOOKUP_WAIT_MS on the event's own path (never a press's), then in the background,
 * so the next line names them. Answers (and failures, for a shorter while) are cached, the cache
 * bounded, one call per id in flight.
 */

import type { InboundEvent } from '../events.ts';

/** How long an event waits for `users.info` before it goes on with the id. */
export const LOOKUP_WAIT_MS = 1500;
/** Most people remembered; the oldest entry goes first. */
const MAX_ENTRIES = 1000;
/** A name is asked again after this long (people rename themselves). */
const NAME_TTL_MS = 6 * 60 * 60 * 1000;
/** A failed lookup (missing scope, unknown user) is not retried before this. */
const MISS_TTL_MS = 10 * 60 * 1000;

/** Asks Slack for a user's name (`users.info`); undefined when it has none. */
export type UserLookup = (userId: string) => Promise<string | undefined>;

interface Entry {
  readonly name: string | undefined;
  readonly until: number;
}

/** The adapter's directory of names by user id. */
export class SlackUserNames {
  readonly #lookup: UserLookup;
  readonly #now: () => number;
  readonly #waitMs: number;
  readonly #entries = new Map<string, Entry>();
  readonly #inFlight = new Map<string, Promise<string | undefined>>();

  /** `lookup` is called at most once per id at a time; `waitMs` bounds an event's wait. */
  constructor(lookup: UserLookup, o: { now?: () => number; waitMs?: number } = {}) {
    this.#lookup = lookup;
    this.#now = o.now ?? Date.now;
    this.#waitMs = o.waitMs ?? LOOKUP_WAIT_MS;
  }

  /** Keeps a name a payload carried. */
  learn(userId: string, name: string | undefined): void {
    const n = name?.trim();
    if (n) this.#put(userId, n, NAME_TTL_MS);
  }

  /** The name known now, without asking Slack. */
  known(userId: string): string | undefined {
    const e = this.#entries.get(userId);
    return e !== undefined && e.until > this.#now() ? e.name : undefined;
  }

  /**
   * The person's name: known, or asked of Slack, waiting at most `waitMs` (the lookup goes on in
   * the background and fills the cache); undefined when Slack has none or was too slow.
   */
  async nameOf(userId: string): Promise<string | undefined> {
    const e = this.#entries.get(userId);
    if (e !== undefined && e.until > this.#now()) return e.name;
    const pending = this.#inFlight.get(userId) ?? this.#start(userId);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.#waitMs);
      timer.unref?.();
    });
    try {
      return await Promise.race([pending, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  #start(userId: string): Promise<string | undefined> {
    const run = this.#lookup(userId)
      .then((name) => {
        const n = name?.trim() || undefined;
        this.#put(userId, n, n === undefined ? MISS_TTL_MS : NAME_TTL_MS);
        return n;
      })
      .catch(() => {
        this.#put(userId, undefined, MISS_TTL_MS);
        return undefined;
      })
      .finally(() => this.#inFlight.delete(userId));
    this.#inFlight.set(userId, run);
    return run;
  }

  #put(userId: string, name: string | undefined, ttl: number): void {
    this.#entries.delete(userId);
    this.#entries.set(userId, { name, until: this.#now() + ttl });
    while (this.#entries.size > MAX_ENTRIES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }
}

/**
 * The event with its sender named: a name it carries is learnt; one without (message events)
 * takes the known name, or users.info's within the wait; a press never waits for it.
 */
export async function namedEvent(
  names: SlackUserNames,
  event: InboundEvent,
): Promise<InboundEvent> {
  const user = event.user;
  if (user.display !== '' && user.display !== user.id) {
    names.learn(user.id, user.display.replace(/^@/, ''));
    return event;
  }
  const name = event.kind === 'button' ? names.known(user.id) : await names.nameOf(user.id);
  return name === undefined ? event : { ...event, user: { ...user, display: `@${name}` } };
}
