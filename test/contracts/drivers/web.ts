/**
 * The web console driver: a browser logged in with the bridge's one-time link, reading the real
 * /events stream (messages, toasts, reason prompts) and posting commands, presses and reasons
 * with its cookie and CSRF token. It keeps its cookie across a restart of the bridge, as a
 * browser does (the session must still be valid). The console has one person, the local admin:
 * every persona is that person.
 */
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { RunningBridge } from '../../../src/app/bridge.ts';
import { signIn } from '../../support/console-login.ts';
import type {
  AttachedFile,
  Persona,
  PlatformDriver,
  Press,
  SeenFile,
  SeenMessage,
} from '../platform-driver.ts';
import { waitFor } from '../platform-driver.ts';
import { ConsoleStream } from './web-stream.ts';

/** What a press needs to find what followed it. */
interface WebPress {
  readonly toastsBefore: number;
  readonly promptsBefore: number;
}

const ENTITIES: Readonly<Record<string, string>> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#39;': "'",
};

/** A console message's HTML as text: fields as `Label: value`, buttons left out. */
export function htmlText(html: string): string {
  return html
    .replace(/<div class="buttons">[\s\S]*?<\/div>/g, '')
    .replace(/<dt>([\s\S]*?)<\/dt><dd>([\s\S]*?)<\/dd>/g, '\n$1: $2')
    .replace(/<[^>]+>/g, '')
    .replace(/&(amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e]!);
}

/** The buttons of a console message: label and token. */
function buttonsOf(html: string): { label: string; token: string }[] {
  return [...html.matchAll(/data-token="([^"]+)">([^<]*)<\/button>/g)].map((m) => ({
    token: htmlText(m[1]!),
    label: htmlText(m[2]!),
  }));
}

/** Drives the bridge's web console over HTTP; PlatformDriver documents its members. */
export class WebDriver implements PlatformDriver {
  readonly platform = 'web' as const;
  readonly singleUser = true;
  readonly chatRef = 'web:console';
  readonly #tab = 'tab-contract';
  #base = '';
  #cookie = '';
  #csrf = '';
  #stream: ConsoleStream | undefined;

  /** Nothing to start: the console is part of the bridge. */
  static async start(): Promise<WebDriver> {
    return new WebDriver();
  }

  env(): Record<string, string> {
    return {};
  }

  /**
   * Logs in with the bridge's link the first time (after a restart the cookie from before must
   * still open the page), reads the CSRF token, and opens the event stream, waiting until it
   * has replayed what the page shows.
   */
  async attach(bridge: RunningBridge): Promise<void> {
    this.#stream?.close();
    this.#base = bridge.url;
    if (this.#cookie === '') {
      const res = await signIn(bridge.loginUrl);
      this.#cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
    }
    const res = await fetch(`${this.#base}/`, { headers: this.#headers() });
    expect(res.status).toBe(200);
    const page = await res.text();
    const csrf = /name="csrf-token" content="([^"]+)"/.exec(page)?.[1] ?? '';
    // The token is the session's: the same before and after a restart.
    if (this.#csrf !== '') expect(csrf).toBe(this.#csrf);
    this.#csrf = csrf;
    expect(this.#csrf).not.toBe('');
    const version = Number(/data-version="(\d+)"/.exec(page)?.[1] ?? 0);
    this.#stream = await ConsoleStream.open(`${this.#base}/events?tab=${this.#tab}`, this.#cookie);
    const stream = this.#stream;
    await waitFor(() => (stream.lastId >= version ? true : undefined), 'the console replay');
  }

  userId(): string {
    return 'admin';
  }

  displayName(): string {
    return 'admin (web console)';
  }

  async sendCommand(_who: Persona, text: string): Promise<void> {
    await this.#post('/api/command', { text, key: randomUUID() });
  }

  /** The page posts the same request twice (a retried POST carries the same key). */
  async deliverTwice(_who: Persona, text: string): Promise<void> {
    const key = randomUUID();
    await this.#post('/api/command', { text, key });
    await this.#post('/api/command', { text, key });
  }

  /** Files the console holds for its messages (links `/files/<id>`), fetched with the session. */
  async sentFiles(): Promise<SeenFile[]> {
    const out: SeenFile[] = [];
    for (const m of this.#events().messages) {
      for (const link of m.html.matchAll(/href="(\/files\/[^"]+)"[^>]*>([^<]*)</g)) {
        const res = await fetch(`${this.#base}${htmlText(link[1]!)}`, { headers: this.#headers() });
        expect(res.status).toBe(200);
        const data = Buffer.from(await res.arrayBuffer());
        out.push({ name: htmlText(link[2]!), data, caption: htmlText(m.html).trim() });
      }
    }
    return out;
  }

  /** The bridge's messages as the page shows them now. */
  latestMessages(): SeenMessage[] {
    return this.#events().messages.map((m) => ({
      id: m.ref,
      text: htmlText(m.html).trim(),
      buttons: buttonsOf(m.html).map((b) => b.label),
      edited: m.versions > 1,
    }));
  }

  async press(who: Persona, message: SeenMessage, label: string): Promise<Press> {
    const held = this.#events().messages.find((m) => m.ref === message.id);
    const button = held && buttonsOf(held.html).find((b) => b.label === label);
    if (!button) throw new Error(`no button "${label}" on console message ${message.id}`);
    const handle: WebPress = {
      toastsBefore: this.#events().toasts.length,
      promptsBefore: this.#events().prompts.length,
    };
    await this.#post('/api/press', {
      ref: message.id,
      token: button.token,
      tab: this.#tab,
      key: randomUUID(),
    });
    return { persona: who, label, handle };
  }

  /** The toast shown on the presser's tab. */
  async answerTo(press: Press): Promise<string> {
    const { toastsBefore } = press.handle as WebPress;
    return waitFor(() => this.#events().toasts[toastsBefore], 'a toast');
  }

  /** Answers the inline prompt the press opened. */
  async replyReason(press: Press, text: string): Promise<void> {
    const { promptsBefore } = press.handle as WebPress;
    const prompt = await waitFor(() => this.#events().prompts[promptsBefore], 'a prompt');
    await this.#post('/api/reply', { ref: prompt.ref, text, key: randomUUID() });
  }

  /** A console reply to one of its messages. */
  async replyTo(_who: Persona, message: SeenMessage, text: string): Promise<void> {
    await this.#post('/api/reply', { ref: message.id, text, key: randomUUID() });
  }

  /** The command box with a file chosen: a multipart/form-data post, as the page sends it. */
  async sendCommandWithFile(_who: Persona, text: string, file: AttachedFile): Promise<void> {
    await this.#upload('/api/command', { text, key: randomUUID() }, file);
  }

  /** The reply form of a message with a file chosen (multipart/form-data). */
  async replyToWithFile(
    _who: Persona,
    message: SeenMessage,
    text: string,
    file: AttachedFile,
  ): Promise<void> {
    await this.#upload('/api/reply', { ref: message.id, text, key: randomUUID() }, file);
  }

  async #upload(path: string, fields: Record<string, string>, file: AttachedFile): Promise<void> {
    const form = new FormData();
    form.set('csrf', this.#csrf);
    for (const [k, v] of Object.entries(fields)) form.set(k, v);
    form.append('file', new Blob([new Uint8Array(file.data)]), file.name);
    const res = await fetch(`${this.#base}${path}`, {
      method: 'POST',
      headers: { ...this.#headers(), accept: 'application/json', origin: this.#base },
      body: form,
    });
    expect([path, res.status, await res.text()]).toEqual([path, 200, '{"ok":true}']);
  }

  async close(): Promise<void> {
    this.#stream?.close();
  }

  #events(): ConsoleStream {
    if (!this.#stream) throw new Error('the console is not open');
    return this.#stream;
  }

  /** The run page's sections (`/runs/<id>?part=sections`), as the live page fetches them. */
  async runPage(runId: string): Promise<Record<string, string>> {
    const res = await fetch(`${this.#base}/runs/${encodeURIComponent(runId)}?part=sections`, {
      headers: this.#headers(),
    });
    if (!res.ok) throw new Error(`run page of ${runId}: HTTP ${res.status}`);
    return (await res.json()) as Record<string, string>;
  }

  #headers(): Record<string, string> {
    return { cookie: this.#cookie };
  }

  async #post(path: string, body: Record<string, string>): Promise<void> {
    const res = await fetch(`${this.#base}${path}`, {
      method: 'POST',
      headers: {
        ...this.#headers(),
        'content-type': 'application/json',
        accept: 'application/json',
        'x-csrf-token': this.#csrf,
        origin: this.#base,
      },
      body: JSON.stringify(body),
    });
    expect([path, res.status, await res.text()]).toEqual([path, 200, '{"ok":true}']);
  }
}
