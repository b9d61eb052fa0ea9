/**
 * Edits of a person's messages (issue 29). An edit is never applied: a command is read once, as
 * first sent (an edited `/run` starts no second run), a note keeps the words it was first sent
 * with, an answer to a question was already used. Each edit of a message that was for the bot
 * is answered out loud, saying so and what to do instead; edits of anything else (chatter) stay
 * silent. What the message did is found by its first idempotency key in the audit log.
 */
import type { Edit } from '../bridges/events.ts';
import { prose } from '../bridges/render-text.ts';
import type { AuditEntry } from '../db/repositories/audit.ts';
import {
  accessOfEvent,
  audit,
  type ChatOpsDeps,
  channelFor,
  keyMarker,
  postReply,
} from './context.ts';
import { commandHow } from './unbound-hints.ts';

/** Audit rows of the editor searched for what the first message did (newest first). */
const LOOK_BACK = 200;

/** The answer to an edit, or undefined when the edited message was never for the bot. */
export function editWords(ev: Edit, first: AuditEntry | undefined): string | undefined {
  const run = first?.target ? ` about run ${first.target}` : '';
  const action = first?.outcome === 'allowed' ? first.action : undefined;
  if (action === 'reply:guidance') {
    return `Edits are not applied: your note${run} is kept as you first sent it. To change it, reply again with the correction; both go to the agent.`;
  }
  if (action?.startsWith('reply:') === true) {
    return `Edits are not applied: your answer${run} was already used as you first sent it.`;
  }
  const verb = action?.startsWith('command:') === true ? action.slice(8) : ev.command;
  if (verb === undefined) return undefined;
  const again = verb === 'run' ? ', so no second run was started' : '';
  return `Edits are not applied: a command is read once, as first sent${again}. To ${verb === 'run' ? 'start a run' : 'do it'} with the new words, send ${commandHow(ev.user.platform, verb)} again as a new message.`;
}

/** Answers an edit of a message that was for the bot; applies nothing. */
export async function handleEdit(deps: ChatOpsDeps, ev: Edit): Promise<void> {
  const access = await accessOfEvent(deps, ev);
  const recent = await deps.repos.audit.listRecent({ actor: access.actor.id, limit: LOOK_BACK });
  const marker = keyMarker(ev.originalKey);
  const first = recent.find((e) => e.action !== 'edit' && (e.detail ?? '').includes(marker));
  const words = editWords(ev, first);
  if (words === undefined) return;
  await audit(deps, {
    actor: access.actor,
    action: 'edit',
    chatRef: ev.chatRef,
    key: ev.idempotencyKey,
    ...(first?.target ? { target: first.target } : {}),
    outcome: 'refused',
    detail: `edit of ${first?.action ?? `command:${ev.command}`} not applied`,
  });
  const channel = channelFor(deps, ev.chatRef);
  if (channel) await postReply(channel, ev.chatRef, { text: prose(words), urgency: 'interactive' });
}
