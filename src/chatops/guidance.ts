/**
 * Replies as guidance: a reply to a run's status or checkpoint message (Telegram reply, console
 * reply, Slack thread reply, Discord reply or thread message) by an operator or above is recorded
 * in the run's ledger as a note for the next agent attempt and acknowledged where the reply was,
 * saying which attempt reads it ("Noted: goes to build with the approval; it goes to plan,
 * attempt 2 if changes are requested."). A reply to the bot's other messages about a run (a
 * step's answer, the outcome, an acknowledgement: run_messages) is a note the same way. When the
 * run is finished the person is told their words went nowhere and how to start a new run; a reply
 * to a reason prompt whose question expired (its row swept) is told that nothing was applied
 * (issue 29). A viewer, or anyone without a role here, is refused (privately where the channel
 * can whisper) and nothing is recorded. A reply to our message whose id is not known yet (its
 * send unconfirmed, or a crash's repeat) is about the run the message names. Replies to messages
 * of no run are chatter and ignored.
 */
import type { Reply } from '../bridges/events.ts';
import type { MessageRef } from '../bridges/messages.ts';
import { prose } from '../bridges/render-text.ts';
import type { Role } from '../db/schema.ts';
import { isTerminal, RUN_ID_PATTERN } from '../engine/model.ts';
import {
  type NoteDestinations,
  type NoteTarget,
  noteDestinations,
} from '../engine/note-destination.ts';
import { hasRole } from './authorize.ts';
import {
  accessOfEvent,
  audit,
  type ChatOpsDeps,
  channelFor,
  postReply,
  rememberRunMessage,
} from './context.ts';
import { fetchInputs } from './input-fetch.ts';
import { commandHow } from './unbound-hints.ts';

/** The role a guidance reply needs. */
export const GUIDANCE_ROLE: Role = 'operator';

/**
 * The guidance text, naming the files attached to the reply once they are checked and saved in
 * the run's inputs folder; or why they were refused (then nothing is recorded).
 */
async function withFiles(
  deps: ChatOpsDeps,
  runId: string,
  ev: Reply,
): Promise<{ text: string; refused?: string }> {
  const files = ev.files ?? [];
  if (files.length === 0) return { text: ev.text };
  const save = deps.orchestrator.saveInputs?.bind(deps.orchestrator);
  if (save === undefined) return { text: ev.text, refused: 'files cannot be saved here' };
  const got = await fetchInputs(deps, ev.chatRef, files);
  if (typeof got === 'string') return { text: ev.text, refused: got };
  const paths = await save(runId, got);
  const words = ev.text.trim() === '' ? '' : `${ev.text}\n\n`;
  return { text: `${words}Files with this guidance: ${paths.join(', ')}` };
}

/** The run a reply is about, and what the replied message was (null: a message of no run). */
async function runOfReply(
  deps: ChatOpsDeps,
  ev: Reply,
): Promise<{ runId: string; kind?: string } | null> {
  const { repos } = deps;
  const ref = ev.replyToMessageRef;
  const runId =
    (await repos.statusMessages.runOfMessage(ref)) ??
    (await repos.checkpointMessages.runOfMessage(ref));
  if (runId !== null) return { runId };
  const known = await repos.runMessages.find(ref);
  if (known !== null) return known;
  const named = await runNamedIn(deps, ev);
  return named === null ? null : { runId: named };
}

/** Run ids inside a message's text ("Checkpoint plan:1 — run <id>"). */
const RUN_ID_IN_TEXT = new RegExp(RUN_ID_PATTERN.source.slice(1, -1), 'g');

/**
 * The run our replied message names, when its id is not known (yet): its send's answer not
 * confirmed when the reply came, or a copy repeated by a crash in the send window. Only a
 * message naming one run, and a run this chat follows (its status message is here).
 */
async function runNamedIn(deps: ChatOpsDeps, ev: Reply): Promise<string | null> {
  const ids = new Set(ev.replyToText?.match(RUN_ID_IN_TEXT) ?? []);
  if (ids.size !== 1) return null;
  const [runId] = [...ids] as [string];
  const chats = await deps.repos.statusMessages.chatsOf(runId);
  return chats.includes(ev.chatRef) ? runId : null;
}

/** The status of a run, or undefined when its ledger is no longer kept. */
async function statusOf(deps: ChatOpsDeps, runId: string) {
  try {
    return (await deps.orchestrator.getRun(runId)).status;
  } catch {
    return undefined;
  }
}

/** Handles a Reply that was not an answer to a reason prompt; true when it was about a run. */
export async function handleGuidanceReply(deps: ChatOpsDeps, ev: Reply): Promise<boolean> {
  const about = await runOfReply(deps, ev);
  // Files alone are guidance too (their names are the note); only a reply of nothing is not.
  if (about === null || (ev.text.trim() === '' && (ev.files ?? []).length === 0)) return false;
  const { runId } = about;
  const access = await accessOfEvent(deps, ev);
  const channel = channelFor(deps, ev.chatRef);
  // The answer to what the person just sent: they wait for it. Durable before the next update
  // is taken, delivered at the chat's pace (postReply).
  const say = async (text: string): Promise<{ delivered?: Promise<MessageRef> }> =>
    channel ? postReply(channel, ev.chatRef, { text: prose(text), urgency: 'interactive' }) : {};
  const base = {
    actor: access.actor,
    action: 'reply:guidance',
    chatRef: ev.chatRef,
    key: ev.idempotencyKey,
    target: runId,
  };
  if (about.kind === 'prompt') {
    // The question's row is gone (answered, expired and swept): nothing can apply the answer now.
    await audit(deps, { ...base, outcome: 'refused', detail: 'the question expired' });
    await say(
      `That question about run ${runId} expired, so your answer decided nothing: press the button again to answer.`,
    );
    return true;
  }
  if (access.binding === null || !hasRole(access.role, GUIDANCE_ROLE)) {
    await audit(deps, { ...base, outcome: 'refused', detail: `role ${access.role ?? 'none'}` });
    const why = 'only an operator or above can guide a run here; your reply was not passed on.';
    // Privately where the platform can (Slack ephemeral, Discord DM): the chat need not see it;
    // a DM has no context of its own, so it names the run.
    if (channel?.whisper) {
      await channel.whisper(ev.chatRef, ev.user, `Your reply about run ${runId}: ${why}`);
    } else await say(`${access.actor.name ?? 'You'}: ${why}`);
    return true;
  }
  const status = await statusOf(deps, runId);
  if (status === undefined || isTerminal(status)) {
    await audit(deps, { ...base, outcome: 'refused', detail: `run ${status ?? 'gone'}` });
    await say(finishedWords(runId, status, ev.user.platform));
    return true;
  }
  const text = await withFiles(deps, runId, ev);
  if (text.refused !== undefined) {
    await audit(deps, { ...base, outcome: 'failed', detail: 'attached file refused' });
    await say(`Your guidance was not passed on: ${text.refused}`);
    return true;
  }
  const result = await deps.orchestrator.command(runId, ev.idempotencyKey, {
    type: 'giveGuidance',
    text: text.text,
    actor: access.actor,
  });
  if (!result.ok) {
    await audit(deps, { ...base, outcome: 'failed', detail: result.rejection.message });
    await say(`Could not note your guidance: ${result.rejection.message}`);
    return true;
  }
  const where = noteWhereWords(noteDestinations(result.state));
  await audit(deps, { ...base, outcome: 'allowed', detail: `guidance: ${where}` });
  // A reply to the acknowledgement itself is a note too.
  const ack = await say(`Noted: ${where}.`);
  void ack.delivered?.then(
    (ref) => rememberRunMessage(deps, ref, runId, 'ack'),
    () => undefined,
  );
  return true;
}

/** The answer to words sent to a finished run: they went nowhere, and how to start a new run. */
export function finishedWords(
  runId: string,
  status: string | undefined,
  platform: Reply['user']['platform'],
): string {
  const how = commandHow(platform, 'run <workflow> <task>');
  const state = status === undefined ? 'no longer kept here' : `finished (${status})`;
  return `Run ${runId} is ${state}, so your words went nowhere: no agent will read them. To start a new run: ${how}.`;
}

const at = (t: NoteTarget) => (t.attempt > 1 ? `${t.stepId}, attempt ${t.attempt}` : t.stepId);

/**
 * Where a note goes, in words: "goes to build with the approval; it goes to plan, attempt 2 if
 * changes are requested"; off a checkpoint "kept for the next attempt: …".
 */
export function noteWhereWords(d: NoteDestinations): string {
  if (d.atCheckpoint) {
    const approval = d.withApproval && `goes to ${at(d.withApproval)} with the approval`;
    const changes = d.ifChanges && `goes to ${at(d.ifChanges)} if changes are requested`;
    if (approval && changes) return `${approval}; it ${changes}`;
    if (approval) return approval;
    if (!changes) return 'kept with the run; approving ends it, so no agent will read it';
    return `${changes}; approving ends the run, and then no agent reads it`;
  }
  if (d.again === undefined) return 'kept with the run; no step is left to read it';
  const next = d.next ? `, else to ${at(d.next)}` : '';
  return `kept for the next attempt: ${at(d.again)} if it runs again${next} (the attempt running now does not see it)`;
}
