/**
 * Wire formats of the fake Slack: how Web API bodies arrive (form-encoded with JSON-string values,
 * or JSON), the checks Slack applies to Block Kit, and the payloads Slack sends to an app (slash
 * command forms, Events API envelopes, block_actions and view_submission interactions).
 */
import { createHmac } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/** Loose JSON object. */
// biome-ignore lint/suspicious/noExplicitAny: wire payloads are free-form JSON
export type Json = Record<string, any>;

/** One Web API call the fake received. */
export interface RecordedCall {
  readonly method: string;
  readonly params: Json;
  /** False when the fake answered an error or 429. */
  readonly ok: boolean;
  readonly error?: string;
}

/** A person in a workspace. */
export interface FakeUser {
  readonly id: string;
  readonly name: string;
}

/** A message the bot posted, as the fake stores it. */
export interface StoredMessage {
  readonly channel: string;
  readonly ts: string;
  readonly threadTs?: string;
  /** Who posted it: a person's id, absent for the bot. */
  readonly user?: string;
  /** When Slack received it, on the fake's server-side clock (ms). */
  readonly postedAt: number;
  text: string;
  blocks: Json[];
  edits: number;
  deleted: boolean;
  /** The `metadata` the bot posted it with (event_type, event_payload), shown by history calls. */
  metadata?: Json;
}

/** A modal opened with views.open. */
export interface StoredView {
  readonly id: string;
  readonly triggerId: string;
  readonly view: Json;
}

// Keys WebClient sends as JSON strings inside a form body.
const JSON_KEYS = new Set(['blocks', 'attachments', 'view', 'files', 'metadata']);

/** Parses a Web API request body (form or JSON), decoding the JSON-string values. */
export function readParams(raw: string, contentType: string): Json {
  if (contentType.startsWith('application/json')) return raw === '' ? {} : JSON.parse(raw);
  const params: Json = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    params[key] = JSON_KEYS.has(key) ? JSON.parse(value) : value;
  }
  return params;
}

/** An `ok: false` answer. */
export class ApiError extends Error {
  /** Slack's error code, e.g. `channel_not_found`. */
  constructor(readonly code: string) {
    super(code);
  }
}

/**
 * The mrkdwn a message's blocks may carry together; past it Slack answers `msg_blocks_too_long`
 * (undocumented: observed near 13 000, slackapi/bolt-js#2509; the fake uses the documented 12 000
 * of one markdown block, the stricter of the two).
 */
export const MAX_BLOCKS_TEXT = 12_000;

/** Slack's main Block Kit limits; a violation answers `invalid_blocks` as Slack does. */
export function checkBlocks(blocks: unknown): Json[] {
  if (!Array.isArray(blocks) || blocks.length > 50) throw new ApiError('invalid_blocks');
  const actionIds = new Set<string>();
  let total = 0;
  for (const block of blocks as Json[]) {
    total += String(block.text?.text ?? '').length;
    for (const f of (block.fields ?? []) as Json[]) total += String(f.text ?? '').length;
    if (block.type === 'section') {
      const text = block.text?.text;
      const fields = block.fields as Json[] | undefined;
      if (text === undefined && fields === undefined) throw new ApiError('invalid_blocks');
      if (typeof text === 'string' && (text.length < 1 || text.length > 3000)) {
        throw new ApiError('invalid_blocks');
      }
      if (fields && (fields.length > 10 || fields.some((f) => f.text.length > 2000))) {
        throw new ApiError('invalid_blocks');
      }
    } else if (block.type === 'actions') {
      const elements = block.elements as Json[];
      if (elements.length < 1 || elements.length > 25) throw new ApiError('invalid_blocks');
      for (const e of elements) {
        const id = e.action_id as string;
        if (id.length > 255 || actionIds.has(id) || e.text.text.length > 75) {
          throw new ApiError('invalid_blocks');
        }
        actionIds.add(id);
      }
    } else {
      throw new ApiError('invalid_blocks');
    }
  }
  if (total > MAX_BLOCKS_TEXT) throw new ApiError('msg_blocks_too_long');
  return blocks as Json[];
}

/** `v0=` + HMAC-SHA256 over `v0:{ts}:{body}`, computed independently of the adapter's verifier. */
export function sign(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:${body}`).digest('hex')}`;
}

/** Everything payload builders need about the workspace. */
export interface Workspace {
  readonly teamId: string;
  readonly appId: string;
  readonly botUserId: string;
}

/** The form fields of a slash command. */
export function commandForm(
  w: Workspace,
  o: {
    user: FakeUser;
    channel: string;
    command: string;
    text: string;
    triggerId: string;
    responseUrl: string;
  },
): Record<string, string> {
  return {
    token: 'deprecated-verification-token',
    team_id: w.teamId,
    team_domain: 'fake',
    channel_id: o.channel,
    channel_name: 'ops',
    user_id: o.user.id,
    user_name: o.user.name,
    command: o.command,
    text: o.text,
    api_app_id: w.appId,
    is_enterprise_install: 'false',
    response_url: o.responseUrl,
    trigger_id: o.triggerId,
  };
}

/** An Events API envelope carrying an app_mention. */
export function mentionEnvelope(
  w: Workspace,
  o: {
    user: FakeUser;
    channel: string;
    text: string;
    ts: string;
    threadTs?: string;
    eventId: string;
    files?: Json[];
  },
): Json {
  return {
    token: 'deprecated-verification-token',
    team_id: w.teamId,
    api_app_id: w.appId,
    event: {
      type: 'app_mention',
      user: o.user.id,
      text: o.text,
      ts: o.ts,
      channel: o.channel,
      event_ts: o.ts,
      ...(o.threadTs !== undefined && { thread_ts: o.threadTs }),
      ...(o.files && { files: o.files }),
    },
    type: 'event_callback',
    event_id: o.eventId,
    event_time: Math.floor(Number(o.ts)),
    authorizations: [
      {
        enterprise_id: null,
        team_id: w.teamId,
        user_id: w.botUserId,
        is_bot: true,
        is_enterprise_install: false,
      },
    ],
    is_ext_shared_channel: false,
  };
}

const userJson = (w: Workspace, u: FakeUser): Json => ({
  id: u.id,
  username: u.name,
  name: u.name,
  team_id: w.teamId,
});

/** A block_actions payload for a press of `button` on `message`. */
export function blockActionsPayload(
  w: Workspace,
  o: {
    user: FakeUser;
    message: StoredMessage;
    button: Json;
    triggerId: string;
    responseUrl: string;
    actionTs: string;
  },
): Json {
  const m = o.message;
  const thread = m.threadTs !== undefined ? { thread_ts: m.threadTs } : {};
  return {
    type: 'block_actions',
    user: userJson(w, o.user),
    api_app_id: w.appId,
    token: 'deprecated-verification-token',
    container: {
      type: 'message',
      message_ts: m.ts,
      channel_id: m.channel,
      is_ephemeral: false,
      ...thread,
    },
    trigger_id: o.triggerId,
    team: { id: w.teamId, domain: 'fake' },
    enterprise: null,
    is_enterprise_install: false,
    channel: { id: m.channel, name: 'ops' },
    message: {
      type: 'message',
      user: w.botUserId,
      ts: m.ts,
      text: m.text,
      blocks: m.blocks,
      ...thread,
    },
    state: { values: {} },
    response_url: o.responseUrl,
    actions: [
      {
        action_id: o.button.action_id,
        block_id: 'b1',
        text: o.button.text,
        type: 'button',
        action_ts: o.actionTs,
        ...(o.button.style !== undefined && { style: o.button.style }),
      },
    ],
  };
}

/** A view_submission of `stored` with `value` typed into its (first) input block. */
export function viewSubmissionPayload(
  w: Workspace,
  o: { user: FakeUser; stored: StoredView; value: string; triggerId: string },
): Json {
  const view = o.stored.view;
  const input = (view.blocks as Json[]).find((b) => b.type === 'input');
  if (!input) throw new Error('the view has no input block');
  // Slack's client will not submit a required input left empty; an optional one comes back null.
  if (o.value === '' && input.optional !== true) throw new Error('the input is required');
  const value = o.value === '' ? null : o.value;
  return {
    type: 'view_submission',
    team: { id: w.teamId, domain: 'fake' },
    user: userJson(w, o.user),
    api_app_id: w.appId,
    token: 'deprecated-verification-token',
    trigger_id: o.triggerId,
    view: {
      ...view,
      id: o.stored.id,
      team_id: w.teamId,
      hash: `${o.stored.id}-hash`,
      state: {
        values: {
          [input.block_id]: {
            [input.element.action_id]: { type: input.element.type, value },
          },
        },
      },
    },
    response_urls: [],
    is_enterprise_install: false,
    enterprise: null,
  };
}

/** One app-bound request, kept so it can be redelivered exactly (Slack's retries). */
export interface SlackRequest {
  readonly kind: 'slash_commands' | 'interactive' | 'events_api';
  readonly payload: Json;
}

/** How Slack POSTs a request: commands as a form, interactions as a form's `payload`, events JSON. */
export function httpBody(request: SlackRequest): { body: string; contentType: string } {
  if (request.kind === 'events_api') {
    return { body: JSON.stringify(request.payload), contentType: 'application/json' };
  }
  const form =
    request.kind === 'slash_commands'
      ? new URLSearchParams(request.payload)
      : new URLSearchParams({ payload: JSON.stringify(request.payload) });
  return { body: form.toString(), contentType: 'application/x-www-form-urlencoded' };
}

/** The app's answer: HTTP status and body, or the Socket Mode ack payload as JSON with 200. */
export interface Delivery {
  readonly status: number;
  readonly body: string;
  readonly request: SlackRequest;
}

/** Answers JSON with a 200 (Slack answers errors as `ok: false` with 200 too). */
export function json(res: ServerResponse, body: Json, headers: Record<string, string> = {}): void {
  res
    .writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...headers })
    .end(JSON.stringify(body));
}
