/**
 * The outbox's failure hook, wired to chatops' refusals: a chat that refuses a row nobody waited
 * for (what a previous process queued) is marked and announced just as a direct send's refusal
 * is, a thread's refusal sends the message to its chat, and a chat that moved is re-bound (the
 * outbox itself re-sends the row and the chat's other queued sends to the new id).
 */
import type { Channel, Platform } from '../bridges/channel.ts';
import type { ChatRef } from '../bridges/messages.ts';
import type { OutboxFailure } from '../bridges/outbox/index.ts';
import type { ChatOps } from '../chatops/index.ts';
import { ChatUnreachableError } from '../errors.ts';
import type { Log } from '../log.ts';

/** What the hook needs, bound once chatops and the paced channels exist. */
export interface RefusalTarget {
  readonly chatops: ChatOps;
  readonly channels: ReadonlyMap<Platform, Channel>;
}

/**
 * An `onFailure` for `withOutboxes`; `target()` is undefined until chatops exists (rows failing
 * before that are only logged by the outbox). Settles each failure in the background.
 */
export function outboxRefusals(
  target: () => RefusalTarget | undefined,
  log: Log,
): (failure: OutboxFailure) => void {
  return (failure) => {
    const t = target();
    if (!t || !(failure.error instanceof ChatUnreachableError)) return;
    // A caller who waited acts on the refusal itself (ChatRefusals.deliver): not twice.
    if (failure.waited && !failure.moved) return;
    void settle(t, failure).catch((err: unknown) =>
      log.error({ err, target: failure.target }, 'outbox: refusal not handled'),
    );
  };
}

async function settle(t: RefusalTarget, failure: OutboxFailure): Promise<void> {
  const chat = chatOfTarget(failure.target);
  const outcome = await t.chatops.refused(chat, failure.error);
  // Moved: the outbox sends the row to the new id already. An edit cannot follow a message.
  if (failure.moved || failure.kind !== 'send' || !outcome || !('retryAt' in outcome)) return;
  await t.channels.get(failure.platform as Platform)?.send(outcome.retryAt, failure.message);
}

/** The chat of a send's chat ref or an edit's message ref (`<chat>/<message id>`). */
function chatOfTarget(target: string): ChatRef {
  const slash = target.indexOf('/');
  return (slash < 0 ? target : target.slice(0, slash)) as ChatRef;
}
