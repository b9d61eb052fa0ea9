/**
 * What people write in the fake workspace (a mention, a thread reply, an edit, a direct message)
 * as the Events API request Slack sends the app; each names its author to the fake's users.
 */
import type { FakeSlackWebApi } from './slack-api.ts';
import {
  type FakeUser,
  type Json,
  mentionEnvelope,
  type SlackRequest,
  type Workspace,
} from './slack-wire.ts';

/** A message mentioning the bot (`<@bot> text`). */
export interface MentionInput {
  user: FakeUser;
  channel: string;
  text: string;
  threadTs?: string;
  /** Files shared with the message (the event's `files`). */
  files?: { name: string; data: Buffer }[];
}

/** The `app_mention` event of a message mentioning the bot. */
export function mentionRequest(w: Workspace, api: FakeSlackWebApi, o: MentionInput): SlackRequest {
  api.users.set(o.user.id, o.user);
  const envelope = mentionEnvelope(w, {
    ...o,
    text: `<@${w.botUserId}> ${o.text}`,
    ts: api.ts(),
    eventId: `Ev0${api.next()}`,
    ...(o.files && { files: o.files.map((f) => api.share(f.name, f.data)) }),
  });
  return { kind: 'events_api', payload: envelope };
}

/** A post in the thread under the message `threadTs`; `extra` adds event fields (subtype, bot_id…). */
export interface ThreadReplyInput {
  user: FakeUser;
  channel: string;
  threadTs: string;
  text: string;
  extra?: Json;
  /** Files shared with the reply: the event gets subtype `file_share` and `files`, as Slack sends. */
  files?: { name: string; data: Buffer }[];
}

/** The `message` event of a thread reply, as message.channels delivers it. */
export function threadReplyRequest(
  w: Workspace,
  api: FakeSlackWebApi,
  o: ThreadReplyInput,
): SlackRequest {
  api.users.set(o.user.id, o.user);
  const { files, ...rest } = o;
  const envelope = mentionEnvelope(w, {
    ...rest,
    ts: api.ts(),
    eventId: `Ev0${api.next()}`,
    ...(files && { files: files.map((f) => api.share(f.name, f.data)) }),
  });
  envelope.event = {
    ...envelope.event,
    type: 'message',
    channel_type: 'channel',
    ...(files && { subtype: 'file_share' }),
    ...o.extra,
  };
  return { kind: 'events_api', payload: envelope };
}

/** A person's edit of their message `ts` (in the thread `threadTs`) to read `text`. */
export interface MessageEditInput {
  user: FakeUser;
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
}

/** The `message_changed` event of an edit, carrying the message as it reads now, with `edited`. */
export function messageEditRequest(
  w: Workspace,
  api: FakeSlackWebApi,
  o: MessageEditInput,
): SlackRequest {
  const at = api.ts();
  const envelope = mentionEnvelope(w, {
    user: o.user,
    channel: o.channel,
    text: o.text,
    ts: at,
    eventId: `Ev0${api.next()}`,
  });
  envelope.event = {
    type: 'message',
    subtype: 'message_changed',
    hidden: true,
    channel: o.channel,
    channel_type: 'channel',
    ts: at,
    event_ts: at,
    message: {
      type: 'message',
      user: o.user.id,
      text: o.text,
      ts: o.ts,
      ...(o.threadTs !== undefined && { thread_ts: o.threadTs }),
      edited: { user: o.user.id, ts: at },
    },
  };
  return { kind: 'events_api', payload: envelope };
}

/** A person's direct message to the app (`channel` is the IM's id, starting with D). */
export interface DirectMessageInput {
  user: FakeUser;
  channel: string;
  text: string;
}

/** The top-level `message` event of a direct message, as message.im delivers it. */
export function directMessageRequest(
  w: Workspace,
  api: FakeSlackWebApi,
  o: DirectMessageInput,
): SlackRequest {
  api.users.set(o.user.id, o.user);
  const envelope = mentionEnvelope(w, {
    ...o,
    ts: api.ts(),
    eventId: `Ev0${api.next()}`,
  });
  envelope.event = { ...envelope.event, type: 'message', channel_type: 'im' };
  return { kind: 'events_api', payload: envelope };
}
