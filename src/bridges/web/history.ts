/**
 * What the console chat holds: its recent messages (rendered HTML, buttons, a version bumped on
 * every send and edit, so a reconnecting page asks only for what changed) and the files sent into
 * it. Messages are served from memory and written behind to the console's state store, so after
 * a restart `restore` brings them back (same refs, versions going on); files stay in memory only.
 */
import { randomBytes } from 'node:crypto';
import type { MessageRef } from '../messages.ts';
import { formatMessageRef } from './outbound.ts';
import type { StateWriter } from './state-writer.ts';

/** Who wrote a message: the bridge, or the console user (an echo of what they typed). */
export type MessageAuthor = 'bridge' | 'user';

/** One held message. */
export interface HeldMessage {
  readonly ref: MessageRef;
  /** Position in the chat; edits keep it. */
  readonly n: number;
  readonly author: MessageAuthor;
  html: string;
  /** Tokens of the buttons it shows now. */
  buttons: ReadonlySet<string>;
  /** Bumped on every change; the SSE event id. */
  version: number;
}

/** How a held message is stored (key `msg:<ref>`). */
interface StoredMessage {
  n: number;
  author: MessageAuthor;
  html: string;
  buttons: string[];
  version: number;
}

const MESSAGE_KEY = 'msg:';

/** The recent messages of the console chat, oldest first, at most `limit` of them. */
export class MessageHistory {
  /** Random per process, so refs made after a restart never collide with restored ones. */
  readonly boot = randomBytes(6).toString('base64url');
  readonly #messages = new Map<MessageRef, HeldMessage>();
  readonly #limit: number;
  readonly #writer: StateWriter;
  #n = 0;
  #version = 0;

  /** Keeps at most `limit` messages; every change is written behind through `writer`. */
  constructor(writer: StateWriter, limit = 500) {
    this.#writer = writer;
    this.#limit = limit;
  }

  /** Loads the messages stored before a restart; numbers and versions go on from theirs. */
  async restore(): Promise<void> {
    const stored = await this.#writer.store.list(MESSAGE_KEY);
    const held = stored.map(({ key, value }) => {
      const m = JSON.parse(value) as StoredMessage;
      const { buttons, ...rest } = m;
      return { ref: key.slice(MESSAGE_KEY.length), ...rest, buttons: new Set(buttons) };
    });
    for (const m of held.sort((a, b) => a.n - b.n)) {
      this.#messages.set(m.ref, m);
      this.#n = Math.max(this.#n, m.n);
      this.#version = Math.max(this.#version, m.version);
    }
  }

  /** The version of the latest change (0 when nothing happened yet). */
  get version(): number {
    return this.#version;
  }

  /** A fresh ref that no message uses (for prompts that are not part of the chat). */
  nextRef(): MessageRef {
    this.#n += 1;
    return formatMessageRef(this.boot, this.#n);
  }

  /** Appends a message, dropping the oldest past the limit. */
  add(author: MessageAuthor, html: string, buttons: readonly string[]): HeldMessage {
    const ref = this.nextRef();
    this.#version += 1;
    const held = {
      ref,
      n: this.#n,
      author,
      html,
      buttons: new Set(buttons),
      version: this.#version,
    };
    this.#messages.set(ref, held);
    this.#save(held);
    if (this.#messages.size > this.#limit) {
      const oldest = this.#messages.keys().next().value;
      if (oldest !== undefined) {
        this.#messages.delete(oldest);
        this.#writer.remove(MESSAGE_KEY + oldest);
      }
    }
    return held;
  }

  /** Replaces a held message's content; undefined when it is not held (any more). */
  replace(ref: MessageRef, html: string, buttons: readonly string[]): HeldMessage | undefined {
    const held = this.#messages.get(ref);
    if (!held) return undefined;
    this.#version += 1;
    held.html = html;
    held.buttons = new Set(buttons);
    held.version = this.#version;
    this.#save(held);
    return held;
  }

  /** The held message with this ref. */
  get(ref: MessageRef): HeldMessage | undefined {
    return this.#messages.get(ref);
  }

  /** Every held message, in chat order. */
  all(): HeldMessage[] {
    return [...this.#messages.values()];
  }

  /** Messages changed after `version`, in the order of their changes. */
  changedSince(version: number): HeldMessage[] {
    return this.all()
      .filter((m) => m.version > version)
      .sort((a, b) => a.version - b.version);
  }

  #save(m: HeldMessage): void {
    const stored: StoredMessage = {
      n: m.n,
      author: m.author,
      html: m.html,
      buttons: [...m.buttons],
      version: m.version,
    };
    this.#writer.put(MESSAGE_KEY + m.ref, stored);
  }
}

/** A file sent into the console, offered as a download. */
export interface HeldFile {
  readonly name: string;
  readonly data: Uint8Array;
}

/** Files sent into the console; the oldest are dropped past `maxFiles` or `maxBytes`. */
export class FileShelf {
  readonly #files = new Map<string, HeldFile>();
  readonly #maxFiles: number;
  readonly #maxBytes: number;
  #bytes = 0;

  constructor(maxFiles = 50, maxBytes = 50 * 1024 * 1024) {
    this.#maxFiles = maxFiles;
    this.#maxBytes = maxBytes;
  }

  /** Keeps a file and returns its unguessable id. */
  add(file: HeldFile): string {
    const id = randomBytes(12).toString('base64url');
    this.#files.set(id, file);
    this.#bytes += file.data.byteLength;
    while (
      this.#files.size > this.#maxFiles ||
      (this.#bytes > this.#maxBytes && this.#files.size > 1)
    ) {
      const [oldId, old] = this.#files.entries().next().value!;
      this.#files.delete(oldId);
      this.#bytes -= old.data.byteLength;
    }
    return id;
  }

  /** The file with this id, if still kept. */
  get(id: string): HeldFile | undefined {
    return this.#files.get(id);
  }
}
