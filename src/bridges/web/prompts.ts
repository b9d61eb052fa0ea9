/**
 * Reason prompts (`askForReason`) waiting for their answer. A prompt belongs to the session (and
 * tab) that pressed the button; only that session can answer it. Served from memory and written
 * behind to the console's state store: sessions survive a restart, and so do their prompts.
 */
import type { MessageRef } from '../messages.ts';
import type { StateWriter } from './state-writer.ts';

/** One open prompt. */
export interface PendingPrompt {
  readonly ref: MessageRef;
  readonly sessionId: string;
  readonly tab: string | undefined;
  readonly text: string;
  /** The message whose button asked for the reason. */
  readonly messageRef: MessageRef;
  readonly createdAt: number;
}

/** Prompts older than this are dropped (nobody is answering them any more). */
const PROMPT_TTL_MS = 24 * 3600_000;

const PROMPT_KEY = 'prompt:';

/** The open prompts. */
export class PromptBook {
  readonly #prompts = new Map<MessageRef, PendingPrompt>();
  readonly #writer: StateWriter;
  readonly #now: () => number;

  /** Every change is written behind through `writer`. */
  constructor(writer: StateWriter, now: () => number = Date.now) {
    this.#writer = writer;
    this.#now = now;
  }

  /** Loads the prompts still open before a restart. */
  async restore(): Promise<void> {
    for (const { value } of await this.#writer.store.list(PROMPT_KEY)) {
      const p = JSON.parse(value) as PendingPrompt;
      this.#prompts.set(p.ref, p);
    }
  }

  /** Opens a prompt. */
  add(p: Omit<PendingPrompt, 'createdAt'>): PendingPrompt {
    const now = this.#now();
    for (const [ref, old] of this.#prompts) {
      if (now - old.createdAt > PROMPT_TTL_MS) this.#prompts.delete(ref);
    }
    const prompt = { ...p, createdAt: now };
    this.#prompts.set(p.ref, prompt);
    this.#writer.put(PROMPT_KEY + p.ref, prompt, PROMPT_TTL_MS);
    return prompt;
  }

  /** The open prompt with this ref, when it belongs to the session. */
  find(ref: MessageRef, sessionId: string): PendingPrompt | undefined {
    const p = this.#prompts.get(ref);
    return p?.sessionId === sessionId ? p : undefined;
  }

  /** Closes a prompt. */
  remove(ref: MessageRef): void {
    this.#prompts.delete(ref);
    this.#writer.remove(PROMPT_KEY + ref);
  }

  /** The session's open prompts, oldest first (replayed to a page that connects). */
  ofSession(sessionId: string): PendingPrompt[] {
    return [...this.#prompts.values()].filter((p) => p.sessionId === sessionId);
  }
}
