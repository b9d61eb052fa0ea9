/**
 * Reasons asked in a thread (the reason dialog could not open in time), awaiting the presser's
 * answer there. Kept in the channel's state store (bridge.db's `channel_state` under a bridge), so
 * an answer typed after a restart is still read as the answer, not as a command or guidance. A
 * prompt unanswered for an hour is forgotten, as chatops forgets the pending reason
 * (`reason_prompts`); the answer is then read as any other message.
 */
import type { ChannelLogger } from '../channel.ts';
import { type ChannelStateStore, MemoryChannelState } from '../state.ts';
import type { ThreadPrompt } from './inbound.ts';

/** How long a question asked in a thread waits for its answer (chatops' reason prompt TTL). */
export const THREAD_PROMPT_TTL_MS = 60 * 60 * 1000;
/** Keys taken recently in this process, so two events racing for one answer get it once. */
const MAX_TAKEN = 1000;

const keyOf = (key: string) => `prompt:${key}`;

/** Pending thread prompts by `threadPromptKey`. */
export class ThreadPrompts {
  readonly #store: ChannelStateStore;
  readonly #log: ChannelLogger;
  readonly #taken = new Set<string>();

  /** Kept in `store` (default memory: forgotten on restart). */
  constructor(store: ChannelStateStore | undefined, log: ChannelLogger) {
    this.#store = store ?? new MemoryChannelState();
    this.#log = log;
  }

  /** Records the prompt awaiting `key`'s answer (replacing an older one for the same key). */
  async put(key: string, prompt: ThreadPrompt): Promise<void> {
    this.#taken.delete(key);
    await this.#store.set(keyOf(key), JSON.stringify(prompt), THREAD_PROMPT_TTL_MS);
  }

  /**
   * The prompt `key` answers, forgotten as it is returned (once, even for racing callers). An
   * `empty` answer to a prompt that needs words does not answer it: returned, and kept open.
   */
  readonly take = async (key: string, empty = false): Promise<ThreadPrompt | undefined> => {
    let raw: string | undefined;
    try {
      raw = await this.#store.get(keyOf(key));
    } catch (err) {
      this.#log.warn({ err }, 'slack: thread prompts not readable');
      return undefined;
    }
    // Checked after the read: whoever gets here first takes it; the check and add are one step.
    if (raw === undefined || this.#taken.has(key)) return undefined;
    if (empty) {
      const prompt = parse(raw);
      if (prompt !== undefined && prompt.optional !== true) return prompt;
    }
    this.#taken.add(key);
    if (this.#taken.size > MAX_TAKEN) this.#taken.delete(this.#taken.values().next().value!);
    await this.#store
      .delete(keyOf(key))
      .catch((err: unknown) => this.#log.warn({ err }, 'slack: thread prompt not forgotten'));
    return parse(raw);
  };
}

function parse(raw: string): ThreadPrompt | undefined {
  try {
    const v = JSON.parse(raw) as Partial<ThreadPrompt>;
    if (typeof v.promptRef !== 'string' || typeof v.chatRef !== 'string') return undefined;
    const prompt = { promptRef: v.promptRef, chatRef: v.chatRef };
    return v.optional === true ? { ...prompt, optional: true } : prompt;
  } catch {
    return undefined;
  }
}
