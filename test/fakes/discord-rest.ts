/**
 * REST routes of the fake Discord (paths after `/api/v10`): gateway info, the bot user, command
 * registration, channel messages, interaction callbacks and interaction webhooks (follow-ups and
 * `@original`). Each route returns the status and JSON body Discord would, or throws ApiError.
 */
import {
  checkMessageBody,
  checkModal,
  type FakeDiscordState,
  type FakeInteraction,
} from './discord-store.ts';
import {
  ApiError,
  type Json,
  type JsonObject,
  type StoredMessage,
  snowflake,
  wireChannel,
  wireMessage,
} from './discord-wire.ts';

/** A REST request as a route sees it. */
export interface RestRequest {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  /** The JSON body (or multipart `payload_json`); an array for command registration. */
  readonly body: Json | undefined;
  readonly files: { name: string; size: number; data?: Buffer }[];
  readonly authorized: boolean;
}

/** What a route answers. */
export interface RestResult {
  readonly status: number;
  readonly body?: Json;
}

/** Settings routes need from the fake. */
export interface RestContext {
  readonly state: FakeDiscordState;
  readonly gatewayUrl: string;
  /** A callback later than this after the interaction fails with Unknown interaction. */
  readonly ackDeadlineMs: number;
}

/** Discord: "Interaction tokens are valid for 15 minutes" (follow-ups, `@original` edits). */
export const INTERACTION_TOKEN_TTL_MS = 15 * 60 * 1000;

const EPHEMERAL = 64;
const LOADING = 128;
const ok = (body: Json): RestResult => ({ status: 200, body });
/** The body as an object (empty for anything else). */
const objectOf = (body: Json | undefined): JsonObject =>
  body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
const noContent: RestResult = { status: 204 };

type Handler = (ctx: RestContext, req: RestRequest, params: string[]) => RestResult;

const ROUTES: { method: string; pattern: RegExp; auth: boolean; handler: Handler }[] = [
  { method: 'GET', pattern: /^\/gateway\/bot$/, auth: true, handler: gatewayBot },
  {
    method: 'GET',
    pattern: /^\/users\/@me$/,
    auth: true,
    handler: (c) => ok(c.state.bot as unknown as Json),
  },
  {
    method: 'GET',
    pattern: /^\/applications\/@me$/,
    auth: true,
    handler: (c) =>
      ok({ id: c.state.applicationId, name: 'phasebridge', flags: c.state.applicationFlags }),
  },
  {
    method: 'GET',
    pattern: /^\/users\/@me\/guilds$/,
    auth: true,
    handler: (c) =>
      ok([
        {
          id: c.state.guildId,
          name: 'Phasebridge Test',
          owner: false,
          permissions: c.state.guildPermissions.toString(),
        },
      ]),
  },
  { method: 'POST', pattern: /^\/users\/@me\/channels$/, auth: true, handler: openDm },
  { method: 'PUT', pattern: /^\/applications\/(\d+)\/commands$/, auth: true, handler: putCommands },
  {
    method: 'PUT',
    pattern: /^\/applications\/(\d+)\/guilds\/(\d+)\/commands$/,
    auth: true,
    handler: putCommands,
  },
  { method: 'GET', pattern: /^\/channels\/(\d+)$/, auth: true, handler: getChannel },
  { method: 'POST', pattern: /^\/channels\/(\d+)\/messages$/, auth: true, handler: postMessage },
  {
    method: 'POST',
    pattern: /^\/channels\/(\d+)\/messages\/(\d+)\/threads$/,
    auth: true,
    handler: startThread,
  },
  { method: 'POST', pattern: /^\/channels\/(\d+)\/typing$/, auth: true, handler: typing },
  {
    method: 'PATCH',
    pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
    auth: true,
    handler: patchMessage,
  },
  {
    method: 'DELETE',
    pattern: /^\/channels\/(\d+)\/messages\/(\d+)$/,
    auth: true,
    handler: deleteMessage,
  },
  {
    method: 'POST',
    pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
    auth: false,
    handler: callback,
  },
  { method: 'POST', pattern: /^\/webhooks\/(\d+)\/([^/]+)$/, auth: false, handler: followUp },
  {
    method: 'PATCH',
    pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/(@original|\d+)$/,
    auth: false,
    handler: editWebhookMessage,
  },
  {
    method: 'DELETE',
    pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/(@original|\d+)$/,
    auth: false,
    handler: deleteWebhookMessage,
  },
];

/** Routes one request; unknown routes are 404 like Discord's. */
export function route(ctx: RestContext, req: RestRequest): RestResult {
  for (const r of ROUTES) {
    const m = r.pattern.exec(req.path);
    if (!m || r.method !== req.method) continue;
    if (r.auth && !req.authorized) throw new ApiError(401, 0, '401: Unauthorized');
    return r.handler(ctx, req, m.slice(1));
  }
  throw new ApiError(404, 0, '404: Not Found');
}

function gatewayBot(ctx: RestContext): RestResult {
  return ok({
    url: ctx.gatewayUrl,
    shards: 1,
    session_start_limit: { total: 1000, remaining: 999, reset_after: 0, max_concurrency: 1 },
  });
}

function openDm(ctx: RestContext, req: RestRequest): RestResult {
  const user = ctx.state.users.get(String(objectOf(req.body).recipient_id));
  if (!user) throw new ApiError(400, 50035, 'Invalid Form Body');
  return ok(wireChannel(ctx.state.dm(user)));
}

function putCommands(ctx: RestContext, req: RestRequest, [app, guild]: string[]): RestResult {
  if (app !== ctx.state.applicationId) throw new ApiError(403, 50001, 'Missing Access');
  const body = Array.isArray(req.body) ? (req.body as JsonObject[]) : [];
  const commands = body.map((c) => ({
    ...c,
    id: snowflake(),
    application_id: app,
    version: snowflake(),
  }));
  if (guild === undefined) ctx.state.globalCommands = commands;
  else ctx.state.guildCommands.set(guild, commands);
  return ok(commands);
}

function getChannel(ctx: RestContext, _req: RestRequest, [id]: string[]): RestResult {
  const channel = ctx.state.channels.get(id!);
  if (!channel) throw new ApiError(404, 10003, 'Unknown Channel');
  if (!ctx.state.access.canView(channel.id, channel.parentId)) {
    throw new ApiError(403, 50001, 'Missing Access');
  }
  return ok(wireChannel(channel));
}

const wire = (ctx: RestContext, m: StoredMessage): Json =>
  wireMessage(m, ctx.state.applicationId) as unknown as Json;

/** Throws what Discord answers when the bot may not post in the channel (see discord-access.ts). */
function checkSend(ctx: RestContext, channelId: string): void {
  const channel = ctx.state.channels.get(channelId);
  if (!channel) throw new ApiError(404, 10003, 'Unknown Channel');
  ctx.state.access.checkSend(channelId, channel.parentId);
}

function postMessage(ctx: RestContext, req: RestRequest, [channelId]: string[]): RestResult {
  checkSend(ctx, channelId!);
  const recipient = ctx.state.channels.get(channelId!)?.recipient;
  if (recipient && ctx.state.dmsClosed.has(recipient.id)) {
    throw new ApiError(403, 50007, 'Cannot send messages to this user');
  }
  const body = objectOf(req.body);
  if (req.files.length === 0) checkMessageBody(body);
  // enforce_nonce: the bot's earlier message with this nonce is the answer (Discord keeps a
  // nonce a few minutes; the fake, for its life).
  const nonce = body.enforce_nonce === true ? body.nonce : undefined;
  const key = typeof nonce === 'string' || typeof nonce === 'number' ? `${channelId}:${nonce}` : '';
  const earlier = key === '' ? undefined : ctx.state.messages.get(ctx.state.nonces.get(key) ?? '');
  if (earlier) return ok(wire(ctx, earlier));
  const message = ctx.state.addMessage(channelId!, {
    author: ctx.state.bot,
    content: typeof body.content === 'string' ? body.content : '',
    embeds: (body.embeds as JsonObject[] | undefined) ?? [],
    components: (body.components as JsonObject[] | undefined) ?? [],
    flags: typeof body.flags === 'number' ? body.flags : 0,
    attachments: req.files.map((f) => ({
      filename: f.name,
      size: f.size,
      ...(f.data && { data: f.data }),
    })),
  });
  if (key !== '') ctx.state.nonces.set(key, message.id);
  return ok(wire(ctx, message));
}

/**
 * Start Thread from Message: a public thread whose id is the message's (as Discord does); 400
 * 160004 when the message has one already.
 */
function startThread(ctx: RestContext, req: RestRequest, [channelId, id]: string[]): RestResult {
  checkSend(ctx, channelId!);
  const parent = ctx.state.channels.get(channelId!)!;
  const message = ctx.state.messages.get(id!);
  if (!message || message.channelId !== channelId)
    throw new ApiError(404, 10008, 'Unknown Message');
  if (parent.kind !== 'text')
    throw new ApiError(400, 50024, 'Cannot execute action on this channel type');
  if ((ctx.state.guildPermissions & (1n << 35n)) === 0n) {
    throw new ApiError(403, 50013, 'Missing Permissions');
  }
  if (ctx.state.channels.has(id!)) {
    throw new ApiError(400, 160004, 'A thread has already been created for this message');
  }
  const name = objectOf(req.body).name;
  if (typeof name !== 'string' || name.length === 0 || name.length > 100) {
    throw new ApiError(400, 50035, 'Invalid Form Body', { name: { _errors: [] } });
  }
  const thread = {
    id: id!,
    kind: 'thread' as const,
    guildId: parent.guildId!,
    parentId: parent.id,
    name,
  };
  ctx.state.channels.set(thread.id, thread);
  return { status: 201, body: wireChannel(thread) };
}

/** Trigger Typing Indicator: recorded in `state.typing` (channel ids, in order). */
function typing(ctx: RestContext, _req: RestRequest, [channelId]: string[]): RestResult {
  checkSend(ctx, channelId!);
  ctx.state.typing.push(channelId!);
  return noContent;
}

function botMessage(ctx: RestContext, channelId: string, messageId: string): StoredMessage {
  const message = ctx.state.messages.get(messageId);
  if (!message || message.channelId !== channelId || message.visibleTo !== undefined) {
    throw new ApiError(404, 10008, 'Unknown Message');
  }
  if (message.author.id !== ctx.state.bot.id) {
    throw new ApiError(403, 50005, 'Cannot edit a message authored by another user');
  }
  return message;
}

function patchMessage(ctx: RestContext, req: RestRequest, [channelId, id]: string[]): RestResult {
  checkSend(ctx, channelId!);
  const message = botMessage(ctx, channelId!, id!);
  return ok(wire(ctx, ctx.state.editMessage(message, objectOf(req.body))));
}

function deleteMessage(ctx: RestContext, _req: RestRequest, [channelId, id]: string[]): RestResult {
  ctx.state.messages.delete(botMessage(ctx, channelId!, id!).id);
  return noContent;
}

function interactionOf(ctx: RestContext, id: string, token: string): FakeInteraction {
  const interaction = ctx.state.interactions.get(id);
  if (!interaction || interaction.token !== token)
    throw new ApiError(404, 10062, 'Unknown interaction');
  return interaction;
}

function responseMessage(ctx: RestContext, i: FakeInteraction, data: JsonObject, flags: number) {
  return ctx.state.addMessage(i.channel.id, {
    author: ctx.state.bot,
    content: typeof data.content === 'string' ? data.content : '',
    embeds: (data.embeds as JsonObject[] | undefined) ?? [],
    components: (data.components as JsonObject[] | undefined) ?? [],
    flags,
    interactionId: i.id,
    ...((flags & EPHEMERAL) !== 0 && { visibleTo: i.user.id }),
  });
}

function callback(ctx: RestContext, req: RestRequest, [id, token]: string[]): RestResult {
  const i = interactionOf(ctx, id!, token!);
  if (ctx.state.now() - i.createdAt > ctx.ackDeadlineMs)
    throw new ApiError(404, 10062, 'Unknown interaction');
  if (i.callbacks.length > 0) {
    throw new ApiError(400, 40060, 'Interaction has already been acknowledged.');
  }
  const type = objectOf(req.body).type;
  const data = objectOf(req.body).data as JsonObject | undefined;
  const flags = typeof data?.flags === 'number' ? data.flags : 0;
  const onMessage = i.type === 3 || (i.type === 5 && i.messageId !== undefined);
  if (type === 4) {
    checkMessageBody(data ?? {});
    i.originalMessageId = responseMessage(ctx, i, data ?? {}, flags).id;
  } else if (type === 5) {
    i.originalMessageId = responseMessage(ctx, i, {}, flags | LOADING).id;
  } else if ((type === 6 || type === 7) && onMessage) {
    if (type === 7) ctx.state.editMessage(ctx.state.messages.get(i.messageId!)!, data ?? {});
  } else if (type === 9 && i.type !== 5) {
    checkModal(data);
    i.modal = data!;
  } else {
    throw new ApiError(400, 50035, `Invalid interaction response type ${String(type)} here`);
  }
  i.callbacks.push({ type: type as number, ...(data && { data }) });
  return noContent;
}

/** The interaction of a webhook token still valid: 401 Invalid Webhook Token once 15 min passed. */
function liveToken(ctx: RestContext, token: string): FakeInteraction {
  const i = ctx.state.interactionByToken(token);
  if (ctx.state.now() - i.createdAt > INTERACTION_TOKEN_TTL_MS) {
    throw new ApiError(401, 50027, 'Invalid Webhook Token');
  }
  return i;
}

function followUp(ctx: RestContext, req: RestRequest, [app, token]: string[]): RestResult {
  const i = liveToken(ctx, token!);
  if (app !== ctx.state.applicationId || i.callbacks.length === 0) {
    throw new ApiError(404, 10015, 'Unknown Webhook');
  }
  const body = objectOf(req.body);
  checkMessageBody(body);
  const flags = typeof body.flags === 'number' ? body.flags : 0;
  const message = responseMessage(ctx, i, body, flags);
  i.followUps.push(message.id);
  return req.query.wait === 'true' ? ok(wire(ctx, message)) : noContent;
}

function webhookMessage(ctx: RestContext, token: string, which: string): StoredMessage {
  const i = liveToken(ctx, token);
  const id = which === '@original' ? (i.originalMessageId ?? i.messageId) : which;
  const message = id === undefined ? undefined : ctx.state.messages.get(id);
  if (!message) throw new ApiError(404, 10008, 'Unknown Message');
  return message;
}

function editWebhookMessage(
  ctx: RestContext,
  req: RestRequest,
  [, token, which]: string[],
): RestResult {
  const message = webhookMessage(ctx, token!, which!);
  message.flags &= ~LOADING;
  return ok(wire(ctx, ctx.state.editMessage(message, objectOf(req.body))));
}

function deleteWebhookMessage(
  ctx: RestContext,
  _req: RestRequest,
  [, token, which]: string[],
): RestResult {
  ctx.state.messages.delete(webhookMessage(ctx, token!, which!).id);
  return noContent;
}
