/**
 * A session offer's choice applied through the CLI's own code (session-actions.ts), by a press
 * or, after a kill between the choice's record and its application, by the next start: both
 * under the press's idempotency key, so the engine commits nothing twice.
 */
import type { ChatRef } from '../bridges/messages.ts';
import type { Actor, RunState } from '../engine/model.ts';
import {
  abortSession,
  actionWords,
  restartSession,
  resumeSession,
  type SessionAction,
} from '../jobs/orchestrator/session-actions.ts';
import type { InterruptedSession } from '../jobs/orchestrator/sessions.ts';
import type { ChatOpsDeps } from './context.ts';

/** What the offers need from the rest of chatops. */
export interface SessionOfferHooks {
  /** Makes a chat follow a run (status message, checkpoints). */
  follow(runId: string, chat: ChatRef): void;
  /** Posts a run's open checkpoint again in a chat (resume of a plan waiting for confirmation). */
  showCheckpoint(state: RunState, chat: ChatRef): Promise<void>;
}

/**
 * Who chose, under which key, in which chat; `pressed`: a person waits there (an open checkpoint
 * of a resumed run is shown to them; at start-up the awaiting runs' catch-up shows it instead).
 */
export interface Choice {
  actor: Actor;
  key: string;
  chat: ChatRef;
  pressed: boolean;
}

/** Applies `action` to session `s` of `workspace`; the words for the presser and the copies. */
export async function applyChoice(
  o: ChatOpsDeps['orchestrator'],
  hooks: SessionOfferHooks,
  action: SessionAction,
  s: InterruptedSession,
  workspace: string,
  choice: Choice,
): Promise<string> {
  // The presser as every decision names them (named from the people table when the press is not).
  const by = { actor: choice.actor, key: choice.key, originChat: choice.chat };
  const chat = choice.chat;
  const control = s.runId === undefined ? null : o;
  if (action === 'abort') {
    return actionWords(action, s, await abortSession(control, s, workspace, by));
  }
  if (action === 'restart') {
    const run = await restartSession(control, s, workspace, by);
    if (run !== null) hooks.follow(run.id, chat);
    return actionWords(action, s, run);
  }
  const run: RunState = await resumeSession(o, s, by);
  hooks.follow(run.id, chat);
  if (choice.pressed && run.status === 'awaiting' && run.checkpoint !== null) {
    await hooks.showCheckpoint(run, chat);
  }
  return actionWords(action, s, run);
}
