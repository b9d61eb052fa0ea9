/**
 * The console page's event stream, read as EventSource would: chat messages (each ref with its
 * latest HTML and how many versions arrived), toasts and reason prompts, in arrival order.
 */

/** A console message as the page holds it. */
export interface ConsoleMessage {
  readonly ref: string;
  readonly n: number;
  html: string;
  /** How many versions of it arrived (more than one: it was edited). */
  versions: number;
}

/** An open /events stream. */
export class ConsoleStream {
  readonly #messages = new Map<string, ConsoleMessage>();
  /** Toast texts, in arrival order. */
  readonly toasts: string[] = [];
  /** Reason prompts, in arrival order. */
  readonly prompts: { ref: string; text: string }[] = [];
  /** The highest event id (chat version) received; 0 before any. */
  lastId = 0;
  readonly #abort = new AbortController();
  #buffer = '';

  private constructor() {}

  /** Opens the stream; resolves once the response headers arrived. */
  static async open(url: string, cookie: string): Promise<ConsoleStream> {
    const stream = new ConsoleStream();
    const res = await fetch(url, {
      headers: { cookie, accept: 'text/event-stream' },
      signal: stream.#abort.signal,
    });
    if (res.status !== 200 || !res.body) throw new Error(`/events answered ${res.status}`);
    void stream.#pump(res.body);
    return stream;
  }

  /** The bridge's messages, in chat order. */
  get messages(): ConsoleMessage[] {
    return [...this.#messages.values()].sort((a, b) => a.n - b.n);
  }

  /** Closes the stream. */
  close(): void {
    this.#abort.abort();
  }

  async #pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.#buffer += decoder.decode(chunk, { stream: true });
        for (let end = this.#buffer.indexOf('\n\n'); end >= 0; end = this.#buffer.indexOf('\n\n')) {
          this.#parse(this.#buffer.slice(0, end));
          this.#buffer = this.#buffer.slice(end + 2);
        }
      }
    } catch {
      // aborted by close(), or the bridge stopped
    }
  }

  #parse(block: string): void {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
      else if (line.startsWith('id: ')) this.lastId = Math.max(this.lastId, Number(line.slice(4)));
    }
    if (data.length === 0) return; // comments and retry lines
    const value = JSON.parse(data.join('\n')) as Record<string, unknown>;
    if (event === 'msg' && value.author === 'bridge') this.#message(value);
    else if (event === 'toast') this.toasts.push(String(value.text));
    else if (event === 'prompt')
      this.prompts.push({ ref: String(value.ref), text: String(value.text) });
  }

  #message(value: Record<string, unknown>): void {
    const ref = String(value.ref);
    const known = this.#messages.get(ref);
    if (known) {
      known.html = String(value.html);
      known.versions += 1;
    } else {
      this.#messages.set(ref, { ref, n: Number(value.n), html: String(value.html), versions: 1 });
    }
  }
}
