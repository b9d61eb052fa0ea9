/**
 * The chat message offering an interrupted session, pure: open (the seed's summary, a blocked
 * flow run's reason first, the next safe action, buttons Resume / Restart / Abort) or closed (who
 * chose what, or that the offer went out of date). Button ids are the copy's token from
 * session_offers plus `.c` (resume: continue), `.f` (restart: fresh) or `.x` (abort).
 */

import type { MessageButton, OutgoingMessage } from '../bridges/messages.ts';
import { bold, plain, rich } from '../bridges/render-text.ts';
import type { SessionOfferRecord } from '../db/repositories/session-offers.ts';
import { type Person, personName } from '../engine/person-name.ts';
import type { SessionAction } from '../jobs/orchestrator/session-actions.ts';
import type { InterruptedSession } from '../jobs/orchestrator/sessions.ts';
import { timeWords } from './words.ts';

const SUFFIX: Readonly<Record<SessionAction, string>> = { resume: 'c', restart: 'f', abort: 'x' };

/** Splits a pressed button id into token and action; undefined when it is not a session button. */
export function parseSessionButton(
  id: string,
): { token: string; action: SessionAction } | undefined {
  const m = /^([A-Za-z0-9_-]{16,60})\.([cfx])$/.exec(id);
  if (!m) return undefined;
  const action = (Object.keys(SUFFIX) as SessionAction[]).find((a) => SUFFIX[a] === m[2]);
  return action === undefined ? undefined : { token: m[1]!, action };
}

/** The buttons of an open offer (no Resume for a session phasebridge did not write). */
export function sessionButtons(token: string, resumable: boolean): MessageButton[] {
  return [
    ...(resumable ? [{ id: `${token}.c`, label: 'Resume', style: 'primary' as const }] : []),
    { id: `${token}.f`, label: 'Restart', style: 'default' },
    { id: `${token}.x`, label: 'Abort', style: 'danger' },
  ];
}

/** The seed's summary lines; a blocked run's reason comes first (flow's iron law). */
export function summaryLines(s: InterruptedSession): string[] {
  return [
    ...(s.blockedReason === undefined ? [] : [`⛔ Blocked: ${s.blockedReason}`]),
    `Session: ${s.session}`,
    `State: ${s.state}`,
    `Completed: ${s.completed.join(', ') || 'none'}`,
    `In progress: ${s.inProgress.join(', ') || 'none'}`,
    `Next: ${s.nextAction}`,
  ];
}

/** The open offer. */
export function renderOpenOffer(
  s: InterruptedSession,
  workspace: string,
  token: string,
): OutgoingMessage {
  const resumable = s.runId !== undefined;
  const head = s.blockedReason === undefined ? [] : [plain(`⛔ Blocked: ${s.blockedReason}\n`)];
  const lines = summaryLines(s).slice(s.blockedReason === undefined ? 0 : 1);
  return {
    text: rich(
      ...head,
      bold(`Interrupted ${s.kind} session`),
      plain(` in ${workspace}\n${lines.join('\n')}`),
      plain(
        resumable
          ? '\nResume continues where it left off · Restart starts fresh (clears progress) · Abort stops and cleans up'
          : '\nNot written by phasebridge: resume it with the coordinator itself, or Restart (clears it) · Abort',
      ),
    ),
    buttons: sessionButtons(token, resumable),
    urgency: 'decision',
  };
}

/** A closed copy: who chose what and when, or why the offer no longer holds. */
export function renderClosedOffer(
  r: SessionOfferRecord,
  outcome?: string,
  decider: Person = { id: r.decidedBy ?? '' },
): OutgoingMessage {
  const at = r.decidedAt === null ? '' : ` at ${timeWords(new Date(r.decidedAt).toISOString())}`;
  const what =
    r.status === 'decided'
      ? `${CHOSEN[r.decision ?? ''] ?? r.decision} by ${personName(decider)}${at}`
      : 'This offer is out of date: send `sessions` for the current state';
  return {
    text: rich(
      bold(`Interrupted ${r.kind} session`),
      plain(
        ` ${r.session} (${r.state}) in ${r.workspace}\n${what}${outcome ? `\n${outcome}` : ''}`,
      ),
    ),
    buttons: [],
    // Who chose what is a decision shown, as a checkpoint's: never held behind progress edits.
    urgency: 'decision',
  };
}

const CHOSEN: Readonly<Record<string, string>> = {
  resume: '▶️ Resumed',
  restart: '🔄 Restarted',
  abort: '🛑 Aborted',
};
