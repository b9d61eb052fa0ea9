/**
 * Posts a step's final answer (see final-answer.ts) in the chats that follow the run, as its
 * own message when the step's completion stops the run for a human (checkpoint, block, end):
 * "💬 plan (attempt 1) — run …" and the agent's words, in the run's thread (a reply to its status
 * message where the platform has replies) with a link to the console's run page when its URL is
 * known. The adapters split a message at their platform's limit; an answer longer than
 * ANSWER_MAX_CHARS goes as a file where the platform takes files, else it is cut with a pointer to
 * the step log.
 */
import type { RichText, Urgency } from '../bridges/messages.ts';
import { bold, plain, rich } from '../bridges/render-text.ts';
import type { RunEvent } from '../engine/events.ts';
import type { RunState } from '../engine/model.ts';
import { postAgentFiles } from './agent-files.ts';
import { type ChatOpsDeps, channelFor, rememberRunMessage, runLink, urgencyIn } from './context.ts';
import { finalAnswer } from './final-answer.ts';

/**
 * Whether this update stops for a human (a checkpoint, a block, the end) and how urgent its
 * answer is: queued as a decision ahead of the checkpoint it explains, else as a notice. Steps
 * that pass straight on to the next one post nothing: a quick run would spend the chat's rate
 * budget (Telegram: 20 messages a minute in a group) and starve its status message.
 */
function stopOf(events: readonly RunEvent[]): Urgency | null {
  if (events.some((e) => e.type === 'checkpointOpened')) return 'decision';
  const stops = ['runBlocked', 'runCompleted', 'runFailed', 'runCancelled'];
  return events.some((e) => stops.includes(e.type)) ? 'notice' : null;
}

/** Longest answer posted as text; longer ones go as a file (or are cut). */
export const ANSWER_MAX_CHARS = 3000;

function heading(runId: string, stepId: string, attempt: number): RichText {
  return rich(bold(`💬 ${stepId}`), plain(` (attempt ${attempt}) — run ${runId}`));
}

/** Posts the answers of the steps `events` completed; failures are logged, never thrown. */
export async function postAnswers(
  deps: ChatOpsDeps,
  state: RunState,
  events: readonly RunEvent[],
  chats: readonly string[],
): Promise<void> {
  const urgency = stopOf(events);
  if (urgency === null || chats.length === 0) return;
  for (const e of events) {
    if (e.type !== 'stepCompleted') continue;
    try {
      const logPath = await deps.orchestrator.logPath(state.id, e.stepId, e.attempt);
      const answer = await finalAnswer(state.workspace, logPath, e.directive.reason);
      const at = { runId: state.id, stepId: e.stepId, attempt: e.attempt };
      for (const chat of chats) {
        // Before a checkpoint, in the chat of `/run`: the person waits for it (and the checkpoint).
        const own =
          urgency === 'decision' ? await urgencyIn(deps, state.id, chat, urgency) : urgency;
        if (answer !== undefined) await postOne(deps, chat, at, answer, own);
        // The files the agent declared come with its answer, before the checkpoint.
        const files = e.directive.files ?? [];
        if (files.length > 0) {
          await postAgentFiles(deps, chat, { ...at, workspace: state.workspace }, files);
        }
      }
    } catch (err) {
      deps.log.warn({ err, runId: state.id, step: e.stepId }, 'chatops: step answer not posted');
    }
  }
}

async function postOne(
  deps: ChatOpsDeps,
  chat: string,
  at: { runId: string; stepId: string; attempt: number },
  answer: string,
  urgency: Urgency,
): Promise<void> {
  const channel = channelFor(deps, chat);
  if (!channel) return;
  const { runId, stepId, attempt } = at;
  const head = heading(runId, stepId, attempt);
  // In the run's thread: under its status message in this chat, where the platform has replies.
  const status = channel.capabilities.replies
    ? await deps.repos.statusMessages.get(runId, chat)
    : null;
  const thread = status === null ? {} : { replyTo: status };
  // Keyed by what it is about: a restart replaying the step's completion finds it sent.
  const QUIET = { silent: true, urgency, key: `answer:${runId}:${stepId}:${attempt}`, ...thread };
  const link =
    deps.consoleUrl === undefined ? '' : `\nDiff and log: ${runLink(deps, runId, stepId, attempt)}`;
  // A reply to the answer is a note for the run, or told the run is over (issue 29).
  const remember = (ref: string) => rememberRunMessage(deps, ref, runId, 'answer');
  if (answer.length <= ANSWER_MAX_CHARS) {
    const text = rich(...head, plain(`\n${answer}${link}`));
    await remember(await channel.send(chat, { text, ...QUIET }));
    return;
  }
  if (channel.capabilities.files) {
    const file = await channel.sendFile(chat, {
      ...thread,
      name: `${stepId}-answer-${attempt}.md`,
      data: new TextEncoder().encode(answer),
      caption: rich(
        ...head,
        plain(`\nThe answer is long (${answer.length} characters): attached.${link}`),
      ),
    });
    await remember(file);
    return;
  }
  const cut = `${answer.slice(0, ANSWER_MAX_CHARS - 1)}…\n(cut: the full answer is in the step log: ${runLink(deps, runId, stepId, attempt)})`;
  await remember(await channel.send(chat, { text: rich(...head, plain(`\n${cut}`)), ...QUIET }));
}
