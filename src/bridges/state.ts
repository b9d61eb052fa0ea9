/**
 * What an adapter keeps across a restart of the bridge: a small key/value store of its own, with
 * optional expiry. A bridge passes one platform's slice of bridge.db (`channel_state`) in the
 * adapter's options; adapters see only this interface, never the database. Without one they use
 * `MemoryChannelState`, which forgets everything when the process ends.
 */

/** One live entry of the store. */
export interface ChannelStateEntry {
  readonly key: string;
  readonly value: string;
}

/** An adapter's key/value store; values are strings (adapters serialise their own JSON). */
export interface ChannelStateStore {
  /** True when what is stored outlives the process (bridge.db); false for memory. */
  readonly durable: boolean;
  /** The live value of a key, or undefined (missing or expired). */
  get(key: string): Promise<string | undefined>;
  /** Stores a value; with `ttlMs` it is forgotten after that long, else kept until deleted. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Removes a key (nothing happens when it is missing). */
  delete(key: string): Promise<void>;
  /** Live entries whose key starts with `prefix`, ordered by key. */
  list(prefix: string): Promise<ChannelStateEntry[]>;
}

/** The in-memory store: an adapter used without bridge.db (tests, embedding). */
export class MemoryChannelState implements ChannelStateStore {
  readonly durable = false;
  readonly #entries = new Map<string, { value: string; expiresAt: number }>();
  readonly #now: () => number;

  /** `now` is the clock expiry is measured with (default Date.now). */
  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  async get(key: string): Promise<string | undefined> {
    const entry = this.#entries.get(key);
    return entry && entry.expiresAt > this.#now() ? entry.value : undefined;
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    const now = this.#now();
    for (const [k, e] of this.#entries) if (e.expiresAt <= now) this.#entries.delete(k);
    this.#entries.set(key, { value, expiresAt: ttlMs === undefined ? Infinity : now + ttlMs });
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key);
  }

  async list(prefix: string): Promise<ChannelStateEntry[]> {
    const now = this.#now();
    return [...this.#entries]
      .filter(([k, e]) => k.startsWith(prefix) && e.expiresAt > now)
      .map(([key, e]) => ({ key, value: e.value }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }
}
