/**
 * What every chatops part shares: the orchestrator, bridge.db, the channels, the log and the
 * clock, plus the small lookups built on them (channel of a chat, actor of a user, who may act
 * in a chat, audit entries).
 */

import type { Channel, Platform } from '../bridges/channel.ts';
import type { AccessChat, ButtonPress, ChatUser } from '../bridges/events.ts';
import type { ChatRef, MessageRef, OutgoingMessage, Urgency } from '../bridges/messages.ts';
import type { BindingRecord, Repositories, RunMessageKind } from '../db/repositories/index.ts';
import type { AuditOutcome, Role } from '../db/schema.ts';
import type { Actor } from '../engine/model.ts';
import { NotFoundError } from '../errors.ts';
import type { Log } from '../log.ts';
import type { CheckpointDigests } from './checkpoint-digest.ts';
import type { InputLimits } from './input-files.ts';
import type { ChatOpsOrchestrator } from './ports.ts';

/** The shared dependencies of chatops. */
export interface ChatOpsDeps {
  readonly orchestrator: ChatOpsOrchestrator;
  readonly repos: Repositories;
  readonly channels: ReadonlyMap<Platform, Channel>;
  readonly log: Log;
  readonly clock: () => Date;
  readonly defaultWorkspace: string;
  /** The console's public URL (PHASEBRIDGE_PUBLIC_URL): messages link to its run pages. */
  readonly consoleUrl?: string | undefined;
  /** Caps on files people attach and agents send (config `inputs`). */
  readonly inputLimits?: InputLimits;
  /** Checkpoint content digests (one file cache for the bridge); without it none are bound. */
  readonly digests?: CheckpointDigests;
}

/**
 * Where a person sees a step's diff and log: the console's run page when its URL is known, else
 * the CLI command that prints the log (never a path on the server; the console links it).
 */
export function runLink(
  deps: Pick<ChatOpsDeps, 'consoleUrl'>,
  runId: string,
  stepId: string,
  attempt: number,
): string {
  if (deps.consoleUrl === undefined)
    return `phasebridge logs ${runId} ${stepId} --attempt ${attempt}`;
  return `${deps.consoleUrl.replace(/\/+$/, '')}/runs/${encodeURIComponent(runId)}`;
}

/** Who is acting in which chat, and what they may do there. */
export interface Access {
  readonly actor: Actor;
  /** The binding serving the chat (thread binding first, then chat-wide); null = unbound. */
  readonly binding: BindingRecord | null;
  /** The user's effective role there (global or binding); null = none. */
  readonly role: Role | null;
}

/** The engine actor of a chat user: the immutable `platform:id`, the display name for humans. */
export function actorOf(user: ChatUser): Actor {
  return { id: `${user.platform}:${user.id}`, name: user.display || user.id };
}

/**
 * The actor of a chat user, named: a platform event that carries no name (a Slack message event
 * has the user id only) takes the name the person was last seen under; a named one is remembered
 * for the decisions stored by id (tool approvals, audit rows).
 */
async function namedActor(deps: ChatOpsDeps, user: ChatUser): Promise<Actor> {
  const actor = actorOf(user);
  try {
    let named = actor;
    if (user.display && user.display !== user.id) await deps.repos.people.remember(actor);
    else {
      const known = await deps.repos.people.person(actor.id);
      if (known.name !== undefined) named = { ...actor, name: known.name };
    }
    return await asPerson(deps, named);
  } catch (err) {
    deps.log.warn({ err }, 'chatops: the people directory is not available');
    return actor;
  }
}

/**
 * An identity linked to others acts as their one person (issue 36): named as the person on every
 * platform, and carrying its other identities so votes and four-eyes count the person.
 */
async function asPerson(deps: ChatOpsDeps, actor: Actor): Promise<Actor> {
  const person = await deps.repos.personLinks.personOf(actor.id);
  if (person === null) return actor;
  const sameAs = person.identities.filter((id) => id !== actor.id);
  return { ...actor, name: person.name, sameAs };
}

/** The platform a chat ref belongs to (its first part). */
export function platformOf(chatRef: ChatRef): string {
  return chatRef.slice(0, chatRef.indexOf(':'));
}

/** The chat ref without its thread (a binding's `chatRef`); a thread-less ref is returned as is. */
export function parentChatRef(chatRef: ChatRef, threadRef?: string): ChatRef {
  const suffix = threadRef === undefined ? '' : `:${threadRef}`;
  return suffix !== '' && chatRef.endsWith(suffix) ? chatRef.slice(0, -suffix.length) : chatRef;
}

/** The channel that serves a chat ref, or undefined when that platform is not configured. */
export function channelFor(deps: ChatOpsDeps, chatRef: ChatRef): Channel | undefined {
  return deps.channels.get(platformOf(chatRef) as Platform);
}

/** Sends through the chat's channel; a NotFoundError when its platform is not configured. */
export function sendTo(
  deps: ChatOpsDeps,
  chatRef: ChatRef,
  message: OutgoingMessage,
): Promise<MessageRef> {
  const channel = channelFor(deps, chatRef);
  if (!channel) return Promise.reject(new NotFoundError(`no channel serves ${chatRef}`));
  return channel.send(chatRef, message);
}

/**
 * Queues the answer to what a person sent and resolves once it is durable, not delivered (paced
 * channels): the platform's next update is taken meanwhile. A press behind a reply in a busy
 * Telegram group (20 a minute) waited up to a minute for it and its answer came too late.
 * `delivered` settles with the message's ref (unpaced channels: already delivered).
 */
export async function postReply(
  channel: Channel,
  chatRef: ChatRef,
  message: OutgoingMessage,
): Promise<{ delivered: Promise<MessageRef> }> {
  if (channel.post) return channel.post(chatRef, message);
  const ref = await channel.send(chatRef, message);
  return { delivered: Promise.resolve(ref) };
}

/**
 * Remembers a message the bot sent about a run (run_messages), so a reply to it is answered
 * (issue 29); a failure is logged, never thrown: the message itself went out.
 */
export async function rememberRunMessage(
  deps: ChatOpsDeps,
  ref: MessageRef | undefined,
  runId: string,
  kind: RunMessageKind,
): Promise<void> {
  if (ref === undefined || ref === '') return;
  try {
    await deps.repos.runMessages.add(ref, runId, kind);
  } catch (err) {
    deps.log.warn({ err, runId, kind }, 'chatops: run message not remembered');
  }
}

/**
 * `urgency`, or `interactive` in the chat the run was started from (`/run` there): the person
 * who started it waits for its first status message and its checkpoints (docs/outbox.md).
 */
export async function urgencyIn(
  deps: ChatOpsDeps,
  runId: string,
  chatRef: ChatRef,
  urgency: Urgency,
): Promise<Urgency> {
  const run = await deps.repos.runs.get(runId);
  return run?.originChat === chatRef ? 'interactive' : urgency;
}

/** A bound chat as a chat ref messages can be sent to (the thread appended when bound to one). */
export function bindingChatRef(b: BindingRecord): ChatRef {
  return b.thread === null ? b.chatRef : `${b.chatRef}:${b.thread}`;
}

/** Resolves the binding of the chat an event came from and the user's role there. */
export async function resolveAccess(
  deps: ChatOpsDeps,
  chatRef: ChatRef,
  threadRef: string | undefined,
  user: ChatUser,
): Promise<Access> {
  const binding = await deps.repos.bindings.find(parentChatRef(chatRef, threadRef), threadRef);
  const role = await deps.repos.allowlist.roleOf(user.platform, user.id, binding?.id ?? null);
  return { actor: await namedActor(deps, user), binding, role };
}

/**
 * The access of an event's user: in the chat it came from, or in the chat a console session
 * signed in through (`accessChat`), whose binding and roles then apply.
 */
export function accessOfEvent(
  deps: ChatOpsDeps,
  ev: { chatRef: ChatRef; threadRef?: string; user: ChatUser; accessChat?: AccessChat },
): Promise<Access> {
  if (ev.accessChat !== undefined) {
    return resolveAccess(deps, ev.accessChat.chatRef, ev.accessChat.threadRef, ev.user);
  }
  return resolveAccess(deps, ev.chatRef, ev.threadRef, ev.user);
}

/** One audit entry of a chat action; `key` is the event's idempotency key (kept for dedupe). */
export interface ChatAudit {
  actor: Actor;
  action: string;
  chatRef: ChatRef;
  outcome: AuditOutcome;
  key: string;
  target?: string;
  detail?: string;
}

/** The marker of an idempotency key inside an audit detail. */
export const keyMarker = (key: string): string => `[key ${key}]`;

/** Writes an audit entry; a failure to audit is logged, never shown to the chat user. */
export async function audit(deps: ChatOpsDeps, entry: ChatAudit): Promise<void> {
  const detail = [keyMarker(entry.key), entry.detail].filter(Boolean).join(' ');
  try {
    await deps.repos.audit.record({
      at: deps.clock().getTime(),
      actor: entry.actor.id,
      action: entry.action,
      target: entry.target ?? null,
      chatRef: entry.chatRef,
      outcome: entry.outcome,
      detail,
    });
  } catch (err) {
    deps.log.error({ err, action: entry.action }, 'chatops: could not write the audit entry');
  }
}

/** True when an audit entry for this actor, action and idempotency key exists (dedupe after restart). */
export async function alreadyAudited(
  deps: ChatOpsDeps,
  actor: Actor,
  action: string,
  key: string,
): Promise<boolean> {
  const recent = await deps.repos.audit.listRecent({ actor: actor.id, action, limit: 100 });
  return recent.some((e) => e.outcome === 'allowed' && (e.detail ?? '').includes(keyMarker(key)));
}

/** What every button press handler starts from: its private answer, the presser's access, audit. */
export interface PressContext {
  readonly channel: Channel;
  /** Answers the presser privately. */
  readonly say: (text: string) => Promise<void>;
  readonly access: Access;
  /** Audits this press under `action`. */
  readonly note: (
    outcome: 'allowed' | 'refused' | 'failed',
    detail: string,
    target?: string,
  ) => Promise<void>;
}

/** The shared start of a press: undefined when the press came from a platform we do not run. */
export async function pressContext(
  deps: ChatOpsDeps,
  ev: ButtonPress,
  action: string,
): Promise<PressContext | undefined> {
  const channel = deps.channels.get(ev.interaction.platform);
  if (!channel) return undefined;
  const access = await accessOfEvent(deps, ev);
  return {
    channel,
    access,
    say: (text) => channel.answer(ev.interaction, text, { private: true }),
    note: (outcome, detail, target) =>
      audit(deps, {
        actor: access.actor,
        action,
        chatRef: ev.chatRef,
        outcome,
        key: ev.idempotencyKey,
        detail,
        ...(target !== undefined && { target }),
      }),
  };
}
