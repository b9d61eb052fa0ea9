/**
 * Posts each step's final answer (see final-answer.ts) in the chats that follow the run, as its
 * own message once the step completes: "💬 plan (attempt 1) — run …" and the agent's words. The
 * adapters split a message at their platform's limit; an answer longer than ANSWER_MAX_CHARS goes
 * as a file where the platform takes files, else it is cut with a pointer to the step log.
 */
import type { RichText } from '../bridges/channel.ts';
import { bold, plain, rich } from '../bridges/render-text.ts';
import type { RunEvent } from '../engine/events.ts';
import type { RunState } from '../engine/model.ts';
import { type ChatOpsDeps, channelFor } from './context.ts';
import { finalAnswer } from './final-answer.ts';

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
  for (const e of events) {
    if (e.type !== 'stepCompleted' || chats.length === 0) continue;
    try {
      const logPath = await deps.orchestrator.logPath(state.id, e.stepId, e.attempt);
      const answer = await finalAnswer(state.workspace, logPath, e.directive.reason);
      if (answer === undefined) continue;
      for (const chat of chats) await postOne(deps, chat, state.id, e.stepId, e.attempt, answer);
    } catch (err) {
      deps.log.warn({ err, runId: state.id, step: e.stepId }, 'chatops: step answer not posted');
    }
  }
}

async function postOne(
  deps: ChatOpsDeps,
  chat: string,
  runId: string,
  stepId: string,
  attempt: number,
  answer: string,
): Promise<void> {
  const channel = channelFor(deps, chat);
  if (!channel) return;
  const head = heading(runId, stepId, attempt);
  if (answer.length <= ANSWER_MAX_CHARS) {
    await channel.send(chat, { text: rich(...head, plain(`\n${answer}`)), silent: true });
    return;
  }
  if (channel.capabilities.files) {
    await channel.sendFile(chat, {
      name: `${stepId}-answer-${attempt}.md`,
      data: new TextEncoder().encode(answer),
      caption: rich(
        ...head,
        plain(`\nThe answer is long (${answer.length} characters): attached.`),
      ),
    });
    return;
  }
  const cut = `${answer.slice(0, ANSWER_MAX_CHARS - 1)}…\n(cut: the full answer is in the step log)`;
  await channel.send(chat, { text: rich(...head, plain(`\n${cut}`)), silent: true });
}
