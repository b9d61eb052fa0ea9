/**
 * The Web API methods of the fake Slack and the state they act on: bot messages per channel,
 * ephemerals, modals, uploaded files, the trigger ids Slack issued (single use, 3 s), and the
 * limits Slack enforces on its own: `msg_too_long` past 40 000 characters of `text`,
 * `cant_update_message` for a message the bot did not post or one older than the workspace's
 * edit window, `message_not_found` for a deleted one.
 */
import type { FakeClock } from './slack-clock.ts';
import { FakeSlackInteractions } from './slack-interactions.ts';
import { FakeSlackChannels } from './slack-membership.ts';
import {
  ApiError,
  checkBlocks,
  type FakeUser,
  type Json,
  type StoredMessage,
  type StoredView,
  type Workspace,
} from './slack-wire.ts';

/** State and method implementations; `call` answers the `result` part of `{ok: true, …}`. */
export class FakeSlackWebApi {
  /** Bot messages by channel, oldest first. */
  readonly messages = new Map<string, StoredMessage[]>();
  /** Ephemeral messages (chat.postEphemeral parameters). */
  readonly ephemerals: Json[] = [];
  /** Modals opened. */
  readonly views: StoredView[] = [];
  /** Every person who acted in the workspace, by id: `users.info` answers for them. */
  readonly users = new Map<string, FakeUser>();
  /** Files uploaded (and completed, once `params` is set). */
  readonly files: { id: string; params: Json; bytes: number; data?: Buffer; name?: string }[] = [];
  /** Files users shared with a message, served at `/files-pri/<team>-<id>/download/<name>`. */
  readonly shared = new Map<string, { name: string; data: Buffer }>();
  /** Shared-file paths downloaded (with a valid bot token), in order. */
  readonly downloads: string[] = [];
  /** Channel membership and archive state. */
  readonly channels = new FakeSlackChannels();
  /** Trigger ids and response_urls handed out with commands and interactions. */
  readonly interactions: FakeSlackInteractions;
  /** Messages people posted (the bot cannot edit them), by channel. */
  readonly userMessages = new Map<string, StoredMessage[]>();
  /**
   * The workspace's edit window in ms (undefined: messages may be edited any time, Slack's
   * default); chat.update of an older message answers `cant_update_message`.
   */
  editWindowMs: number | undefined;
  #seq = 0;

  /** `origin` is the fake's base URL; `now` the clock of ts values; `clock` Slack's own (expiries). */
  constructor(
    readonly workspace: Workspace,
    readonly origin: () => string,
    readonly now: () => number,
    readonly clock: FakeClock,
  ) {
    this.interactions = new FakeSlackInteractions(clock);
  }

  /** A fresh sequence number (ids, envelope ids). */
  next(): number {
    return ++this.#seq;
  }

  /** A message ts (`seconds.sequence`), unique within the fake. */
  ts(): string {
    return `${Math.floor(this.now() / 1000)}.${String(this.next()).padStart(6, '0')}`;
  }

  /** A trigger id as Slack issues with a command or interaction. */
  issueTrigger(): string {
    const id = `${this.next()}.${this.workspace.teamId}.${Math.random().toString(16).slice(2)}`;
    return this.interactions.issueTrigger(id);
  }

  /** A person posts `text` in `channel` (a message the bot may not edit); returns its ts. */
  postAsUser(channel: string, user: string, text: string): string {
    const m: StoredMessage = {
      channel,
      ts: this.ts(),
      user,
      postedAt: this.clock.now(),
      text,
      blocks: [],
      edits: 0,
      deleted: false,
    };
    this.userMessages.set(channel, [...(this.userMessages.get(channel) ?? []), m]);
    return m.ts;
  }

  /** A bot message by channel and ts. */
  message(channel: string, ts: string): StoredMessage | undefined {
    return this.messages.get(channel)?.find((m) => m.ts === ts);
  }

  /**
   * A response_url post acting on the pressed message, as Slack documents ("Modifying messages":
   * `replace_original: true` replaces it, `delete_original: true` deletes it); anything else is
   * a new response (kept in `responses` only). Throws ApiError for blocks Slack would refuse.
   */
  respondTo(original: { channel: string; ts: string }, body: Json): void {
    const m = this.message(original.channel, original.ts);
    if (!m || m.deleted) return;
    if (body.delete_original === true) {
      m.deleted = true;
    } else if (body.replace_original === true) {
      // Slack does not document whether the team's edit window binds response_url edits; the
      // fake takes the strict reading, so the bridge's chat.update and thread fallbacks are tested.
      this.#refuseOutsideEditWindow(m);
      checkTextLength(body.text);
      m.blocks = body.blocks === undefined ? [] : checkBlocks(body.blocks);
      m.text = body.text ?? m.text;
      m.edits++;
    }
  }

  /** Runs one method; throws ApiError for an `ok: false` answer. */
  call(method: string, p: Json): Json {
    const w = this.workspace;
    switch (method) {
      case 'auth.test':
        return {
          url: 'https://fake.slack.test/',
          team: 'Fake',
          user: 'phasebridge',
          team_id: w.teamId,
          user_id: w.botUserId,
          bot_id: 'B0FAKEBOT',
        };
      case 'apps.connections.open':
        return { url: `${this.origin().replace('http', 'ws')}/link/?ticket=t${this.next()}` };
      case 'chat.postMessage':
        return this.#post(p);
      case 'chat.update': {
        this.channels.checkPost(p.channel);
        const m = this.#editable(p);
        checkTextLength(p.text);
        m.blocks = p.blocks === undefined ? m.blocks : checkBlocks(p.blocks);
        m.text = p.text ?? m.text;
        m.edits++;
        return { channel: m.channel, ts: m.ts, text: m.text };
      }
      case 'chat.delete': {
        const m = this.#existing(p);
        m.deleted = true;
        return { channel: m.channel, ts: m.ts };
      }
      case 'chat.postEphemeral':
        if (!p.channel || !p.user) throw new ApiError('channel_not_found');
        this.channels.checkEphemeral(p.channel, p.user);
        checkTextLength(p.text);
        this.ephemerals.push(p);
        return { message_ts: this.ts() };
      case 'views.open': {
        this.interactions.useTrigger(p.trigger_id);
        const stored: StoredView = {
          id: `V0${this.next()}`,
          triggerId: p.trigger_id,
          view: p.view,
        };
        this.views.push(stored);
        return { view: { ...p.view, id: stored.id, state: { values: {} } } };
      }
      case 'files.getUploadURLExternal': {
        const id = `F0${this.next()}`;
        this.files.push({ id, params: {}, bytes: -1, name: String(p.filename ?? '') });
        return { upload_url: `${this.origin()}/upload/${id}`, file_id: id };
      }
      case 'files.completeUploadExternal':
        return this.#complete(p);
      case 'users.info': {
        const u = this.users.get(String(p.user));
        if (!u) throw new ApiError('user_not_found');
        const profile = { display_name: u.name, real_name: u.name };
        return { user: { id: u.id, team_id: w.teamId, name: u.name, real_name: u.name, profile } };
      }
      case 'conversations.history':
      case 'conversations.replies':
        return this.#history(method, p);
      case 'conversations.info':
        return { channel: { id: p.channel, name: 'ops', is_member: true } };
      default:
        throw new ApiError('unknown_method');
    }
  }

  /** Receives the bytes POSTed to an upload URL. */
  upload(fileId: string, data: Buffer): boolean {
    const file = this.files.find((f) => f.id === fileId);
    if (file) {
      file.bytes = data.length;
      file.data = data;
    }
    return file !== undefined;
  }

  /** A file a user shares: the file object an event carries (url_private_download is served). */
  share(name: string, data: Buffer): Json {
    const id = `F1${this.next()}`;
    const path = `/files-pri/${this.workspace.teamId}-${id}/download/${encodeURIComponent(name)}`;
    this.shared.set(path, { name, data });
    return {
      id,
      name,
      title: name,
      size: data.length,
      mimetype: 'application/octet-stream',
      url_private: `${this.origin()}${path.replace('/download/', '/')}`,
      url_private_download: `${this.origin()}${path}`,
    };
  }

  #post(p: Json): Json {
    if (!p.channel) throw new ApiError('channel_not_found');
    this.channels.checkPost(p.channel);
    if (!p.text && !p.blocks) throw new ApiError('no_text');
    checkTextLength(p.text);
    const m: StoredMessage = {
      channel: p.channel,
      ts: this.ts(),
      postedAt: this.clock.now(),
      ...(p.thread_ts !== undefined && { threadTs: p.thread_ts }),
      text: p.text ?? '',
      blocks: p.blocks === undefined ? [] : checkBlocks(p.blocks),
      edits: 0,
      deleted: false,
      ...(p.metadata !== undefined && { metadata: checkMetadata(p.metadata) }),
    };
    this.messages.set(m.channel, [...(this.messages.get(m.channel) ?? []), m]);
    return { channel: m.channel, ts: m.ts, message: { text: m.text, ts: m.ts } };
  }

  /**
   * conversations.history (the channel's messages, newest first, thread replies left out) and
   * conversations.replies (a thread: its parent, then the replies, oldest first), at most `limit`
   * (default 100); a message's `metadata` only with `include_all_metadata`, as Slack does.
   */
  #history(method: string, p: Json): Json {
    if (!p.channel) throw new ApiError('channel_not_found');
    this.channels.checkPost(p.channel);
    const all = (this.messages.get(p.channel) ?? []).filter((m) => !m.deleted);
    const limit = Math.min(Number(p.limit ?? 100) || 100, 1000);
    const withMetadata = p.include_all_metadata === true || p.include_all_metadata === 'true';
    const wire = (m: StoredMessage): Json => ({
      type: 'message',
      ts: m.ts,
      text: m.text,
      ...(m.user === undefined ? { bot_id: 'B0FAKEBOT' } : { user: m.user }),
      ...(m.threadTs !== undefined && { thread_ts: m.threadTs }),
      ...(withMetadata && m.metadata !== undefined && { metadata: m.metadata }),
    });
    if (method === 'conversations.replies') {
      if (!p.ts) throw new ApiError('thread_not_found');
      const thread = all.filter((m) => m.ts === p.ts || m.threadTs === p.ts);
      if (thread.length === 0) throw new ApiError('thread_not_found');
      return { messages: thread.slice(0, limit).map(wire), has_more: thread.length > limit };
    }
    const top = all.filter((m) => m.threadTs === undefined || m.threadTs === m.ts).reverse();
    return { messages: top.slice(0, limit).map(wire), has_more: top.length > limit };
  }

  #existing(p: Json): StoredMessage {
    const m = this.message(p.channel, p.ts);
    if (!m || m.deleted) throw new ApiError('message_not_found');
    return m;
  }

  /** A bot message chat.update may change, or Slack's refusal. */
  #editable(p: Json): StoredMessage {
    if (this.userMessages.get(p.channel)?.some((m) => m.ts === p.ts)) {
      throw new ApiError('cant_update_message');
    }
    const m = this.#existing(p);
    this.#refuseOutsideEditWindow(m);
    return m;
  }

  /** The team's edit window, when set, refuses any edit of a message older than it. */
  #refuseOutsideEditWindow(m: StoredMessage): void {
    const window = this.editWindowMs;
    if (window !== undefined && this.clock.now() - m.postedAt > window) {
      throw new ApiError('cant_update_message');
    }
  }

  #complete(p: Json): Json {
    const files = p.files as { id: string; title?: string }[];
    for (const f of files) {
      const upload = this.files.find((u) => u.id === f.id);
      if (!upload || upload.bytes < 0) throw new ApiError('file_not_found');
      upload.params = p;
    }
    return { files: files.map((f) => ({ id: f.id, title: f.title ?? '' })) };
  }
}

/** Slack's limit on a message's `text`. */
export const MAX_MESSAGE_TEXT = 40_000;

/** `msg_too_long` for a `text` over Slack's limit. */
function checkTextLength(text: unknown): void {
  if (typeof text === 'string' && text.length > MAX_MESSAGE_TEXT)
    throw new ApiError('msg_too_long');
}

/** A message's `metadata` as chat.postMessage takes it (a JSON string or object): an event type and payload. */
function checkMetadata(raw: unknown): Json {
  const m = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Json;
  if (typeof m?.event_type !== 'string' || typeof m.event_payload !== 'object') {
    throw new ApiError('invalid_metadata_format');
  }
  return m;
}
