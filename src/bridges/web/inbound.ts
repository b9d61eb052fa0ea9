/**
 * Inbound side of the web console (pure): what the page posts becomes a neutral Command,
 * ButtonPress or Reply from the local admin, and the interaction handle of a press is packed and
 * unpacked here. A session signed in through chat posts as that person (`actorOfSession`).
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { InvalidInputError } from '../../errors.ts';
import type {
  AccessChat,
  ButtonPress,
  ChatUser,
  Command,
  InboundFile,
  Interaction,
  Reply,
} from '../events.ts';
import { decodeHandle, encodeHandle } from '../interaction-handle.ts';
import type { MessageRef } from '../messages.ts';
import { CONSOLE_CHAT_REF } from './outbound.ts';
import type { ConsolePerson } from './session.ts';

/** The console's only user: the local admin, user ref `web:admin`. */
export const WEB_ADMIN: ChatUser = Object.freeze({
  platform: 'web',
  id: 'admin',
  display: 'admin (web console)',
});

/** Who posted: the chat user, and the chat whose roles apply when it is not the console's. */
export interface ConsoleActor {
  readonly user: ChatUser;
  readonly accessChat?: AccessChat;
}

/** The local admin as a poster. */
const ADMIN_ACTOR: ConsoleActor = Object.freeze({ user: WEB_ADMIN });

/**
 * The poster of a session: the local admin, or the chat person it signed in, acting with their
 * roles in the chat they signed in through (the console chat's, i.e. global ones, from a DM).
 */
export function actorOfSession(person: ConsolePerson | null): ConsoleActor {
  if (person === null) return ADMIN_ACTOR;
  const user = { platform: person.platform, id: person.id, display: person.display } as ChatUser;
  if (person.chatRef === null) return { user };
  const accessChat = {
    chatRef: person.chatRef,
    ...(person.threadRef !== undefined && { threadRef: person.threadRef }),
  };
  return { user, accessChat };
}

/** Longest command or reason text accepted. */
export const MAX_INPUT_LENGTH = 4000;

/** The browser's random id of a request (a retried POST carries the same one). */
const clientKey = z.string().regex(/^[A-Za-z0-9_-]{8,64}$/);
/** The id a page gives itself, so private answers reach that tab only. */
const tabId = z.string().regex(/^[A-Za-z0-9_-]{4,64}$/);
const text = z.string().trim().min(1).max(MAX_INPUT_LENGTH);

/** POST /api/command */
export const commandBody = z.object({ text, key: clientKey.optional() });
/** POST /api/press */
export const pressBody = z.object({
  ref: z.string().max(100),
  token: z.string().min(1).max(256),
  key: clientKey.optional(),
  tab: tabId.optional(),
});
/** POST /api/reply */
export const replyBody = z.object({ ref: z.string().max(100), text, key: clientKey.optional() });

/** Validates a posted body against a schema; problems are INVALID_INPUT with the field names. */
export function parseBody<T>(schema: z.ZodType<T>, body: Record<string, string>): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const fields = parsed.error.issues.map((i) => i.path.join('.') || 'body');
  throw new InvalidInputError(`invalid ${[...new Set(fields)].join(', ')}`);
}

/** The idempotency key of a posted event: the browser's key, or a fresh one when it sent none. */
export function eventKey(kind: 'cmd' | 'press' | 'reply', key: string | undefined): string {
  return `web:${kind}:${key ?? randomUUID()}`;
}

/**
 * Reads typed text as a command: `/run demo add login` and `run demo add login` are the same.
 * Undefined when there is no verb.
 */
export function parseTypedCommand(typed: string): { name: string; args: string[] } | undefined {
  const words = typed.trim().replace(/^\//, '').split(/\s+/).filter(Boolean);
  const [verb, ...args] = words;
  if (verb === undefined) return undefined;
  return { name: verb.toLowerCase(), args };
}

/** The Command of typed text (with the files uploaded with it), or undefined when it has no verb. */
export function toCommand(
  typed: string,
  idempotencyKey: string,
  files: readonly InboundFile[] = [],
  who: ConsoleActor = ADMIN_ACTOR,
): Command | undefined {
  const parsed = parseTypedCommand(typed);
  if (!parsed) return undefined;
  return {
    kind: 'command',
    ...parsed,
    rawText: typed.trim(),
    chatRef: CONSOLE_CHAT_REF,
    ...who,
    ...(files.length > 0 && { files }),
    idempotencyKey,
  };
}

/** What the console needs back from a press: who pressed (session, tab) and which message. */
export interface InteractionData {
  /** public session id */
  readonly s: string;
  /** tab id, when the page sent one */
  readonly t?: string | undefined;
  /** the pressed message */
  readonly m: MessageRef;
}

const interactionSchema = z.object({
  s: z.string().min(1),
  t: z.string().optional(),
  m: z.string().min(1),
});

/** Packs a press into an opaque interaction handle. */
export function encodeInteraction(data: InteractionData): Interaction {
  return encodeHandle('web', data);
}

/** Unpacks a handle made by `encodeInteraction`; anything else is INVALID_INPUT. */
export function decodeInteraction(interaction: Interaction): InteractionData {
  return decodeHandle(interaction, 'web', interactionSchema, 'web console');
}

/** The ButtonPress of a press on a held message. */
export function toButtonPress(
  token: string,
  messageRef: MessageRef,
  interaction: InteractionData,
  idempotencyKey: string,
  who: ConsoleActor = ADMIN_ACTOR,
): ButtonPress {
  return {
    kind: 'button',
    token,
    chatRef: CONSOLE_CHAT_REF,
    messageRef,
    ...who,
    interaction: encodeInteraction(interaction),
    idempotencyKey,
  };
}

/** The Reply answering a prompt of `askForReason`, or a held message (with its uploaded files). */
export function toReply(
  answer: string,
  promptRef: MessageRef,
  idempotencyKey: string,
  files: readonly InboundFile[] = [],
  who: ConsoleActor = ADMIN_ACTOR,
): Reply {
  return {
    kind: 'reply',
    text: answer,
    replyToMessageRef: promptRef,
    chatRef: CONSOLE_CHAT_REF,
    ...who,
    ...(files.length > 0 && { files }),
    idempotencyKey,
  };
}
