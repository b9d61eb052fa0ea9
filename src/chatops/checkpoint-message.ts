/**
 * The checkpoint message, pure: rendering it open (with Approve / Request changes / Reject buttons) or
 * closed (the decision, who, when and why, no buttons), and the button ids. A button id is the
 * message's opaque token from checkpoint_messages plus a one-letter answer suffix, so one stored
 * row serves all of a message's buttons and the id stays far below Telegram's 64 bytes.
 */
import type {
  MessageButton,
  MessageField,
  OutgoingMessage,
  RichSegment,
} from '../bridges/messages.ts';
import { bold, code, plain, plainTextOf, rich, richField } from '../bridges/render-text.ts';
import type { Actor, CheckpointAnswer, CheckpointState } from '../engine/model.ts';
import type { StepChanges } from '../jobs/runner/git-changes.ts';
import { changedFilesLines } from './changed-files.ts';
import { namesSegments, policyWords, timeWords } from './words.ts';

/** What a checkpoint message shows besides the checkpoint itself. */
export interface CheckpointView {
  runId: string;
  checkpoint: CheckpointState;
  /** Last lines of the step's output (open messages only). */
  outputTail?: string;
  /**
   * Where a person sees the step's diff and log: the console's run page URL, or the CLI command
   * printing the log (see `runLink`); never a path on the server.
   */
  logs?: string;
  /** The reason the step's agent gave in its directive, when the checkpoint's own reason lacks it. */
  agentReason?: string;
  /** The step's declared permission posture in words ("full access ⚠", "read-only"). */
  permissions?: string;
  /** What the step changed in its git workspace since it started (open messages only). */
  changedFiles?: StepChanges;
  /** Request changes used and allowed for the step (its loop max), when the checkpoint offers it. */
  changes?: { used: number; max: number };
  /** Authors of the notes waiting for this decision, one per note (open messages only). */
  notes?: readonly Actor[];
  /** The step has a diff file: the open message offers a Diff button (any viewer may press it). */
  diff?: boolean;
}

/** What a checkpoint button does: an answer, or Diff (sends the step's diff as a file). */
export type ButtonAction = CheckpointAnswer | 'diff';

const SUFFIX: Readonly<Record<CheckpointAnswer, string>> = { approve: 'a', reject: 'r', loop: 'l' };
/** Not a letter of the session offer ([cfx]) or tool approval ([oud]) buttons. */
const DIFF_SUFFIX = 'v';
const LABEL: Readonly<Record<CheckpointAnswer, string>> = {
  approve: 'Approve',
  reject: 'Reject',
  loop: 'Request changes',
};
/** Cap of the agent's reason in a message (a directive reason may be 4000 characters). */
const MAX_REASON = 1000;

/** The suffix of "Approve with comment": an approval whose modal asks for an optional comment. */
// Not c, f, x (session offers) nor o, u, d (tool approvals): the router tells buttons apart by it.
const COMMENT_SUFFIX = 'w';
/** The label of the button that approves with a comment (chats with modals: Slack, Discord). */
export const COMMENT_LABEL = 'Approve with comment';

/** How the buttons are offered in one chat. */
export interface ButtonOptions {
  /** Offer "Approve with comment" beside Approve (the chat's platform has modals). */
  readonly comment?: boolean;
  /** Offer Diff: the step has a diff to send. */
  readonly diff?: boolean;
}

/**
 * The buttons of an open checkpoint message: one per answer the checkpoint allows (and Approve
 * with comment where the chat has modals), then Diff when the step has a diff to send.
 */
export function checkpointButtons(
  token: string,
  answers: readonly CheckpointAnswer[],
  options: ButtonOptions = {},
): MessageButton[] {
  const order: CheckpointAnswer[] = ['approve', 'loop', 'reject'];
  const buttons: MessageButton[] = order
    .filter((a) => answers.includes(a))
    .flatMap((a): MessageButton[] => {
      const button: MessageButton = {
        id: `${token}.${SUFFIX[a]}`,
        label: LABEL[a],
        style: a === 'approve' ? 'primary' : a === 'reject' ? 'danger' : 'default',
      };
      if (a !== 'approve' || options.comment !== true) return [button];
      return [button, { id: `${token}.${COMMENT_SUFFIX}`, label: COMMENT_LABEL, style: 'default' }];
    });
  if (options.diff === true) {
    buttons.push({ id: `${token}.${DIFF_SUFFIX}`, label: 'Diff', style: 'default' });
  }
  return buttons;
}

/** A pressed checkpoint button: its message token, the action, and whether it asks a comment. */
export interface ParsedButton {
  token: string;
  answer: ButtonAction;
  /** "Approve with comment": the approval waits for the modal's (optional) comment. */
  comment?: true;
}

/** Splits a pressed button id into the message token and the action; undefined when malformed. */
export function parseButtonId(id: string): ParsedButton | undefined {
  const m = /^([A-Za-z0-9_-]{16,60})\.([arlwv])$/.exec(id);
  if (!m) return undefined;
  if (m[2] === COMMENT_SUFFIX) return { token: m[1]!, answer: 'approve', comment: true };
  if (m[2] === DIFF_SUFFIX) return { token: m[1]!, answer: 'diff' };
  const answer = (Object.keys(SUFFIX) as CheckpointAnswer[]).find((a) => SUFFIX[a] === m[2]);
  return answer === undefined ? undefined : { token: m[1]!, answer };
}

/** Why the checkpoint was opened, in words. */
export function kindWords(cp: CheckpointState): string {
  switch (cp.when) {
    case 'before':
      return `before step ${cp.stepId} runs`;
    case 'after':
      return `after step ${cp.stepId}`;
    case 'directive':
      return `the agent of step ${cp.stepId} asked for it`;
    case 'loop-limit':
      return `step ${cp.stepId} reached its loop limit`;
    case 'pause':
      return `step ${cp.stepId} paused`;
  }
}

/** The votes so far: "approved by Alice (1 of 2 approvals)". */
export function votesWords(cp: CheckpointState): string | undefined {
  const says = votesSays(cp);
  return says === undefined ? undefined : plainTextOf(says);
}

/** votesWords as message text: the approvers as personSegment shows them in each chat. */
export function votesSays(cp: CheckpointState): RichSegment[] | undefined {
  const approvers = cp.votes.filter((v) => v.answer === 'approve').map((v) => v.actor);
  if (approvers.length === 0) return undefined;
  const count = `${approvers.length} of ${cp.policy.approvals} approvals`;
  return [plain('approved by '), ...namesSegments(approvers), plain(` (${count})`)];
}

/** The open message: step, reason, output tail, logs, policy, votes, buttons. */
export function renderOpenCheckpoint(
  view: CheckpointView,
  token: string,
  buttons: ButtonOptions = {},
): OutgoingMessage {
  const cp = view.checkpoint;
  const text: RichSegment[] = [
    plain('✋ '),
    bold(`Checkpoint ${cp.id}`),
    plain(` — run ${view.runId}`),
  ];
  text.push(plain(`\n${clip(cp.reason, MAX_REASON)}`), ...agentSays(view));
  if (cp.contentChanged !== undefined) {
    text.push(
      plain(
        `\n\n⚠ ${clip(cp.contentChanged, MAX_REASON)} after this message was first posted: this is the new version${cp.policy.approvals > 1 ? '; approvals given before count no more' : ''}.`,
      ),
    );
  }
  if (view.changedFiles !== undefined) text.push(...changedSays(cp.stepId, view.changedFiles));
  if (view.outputTail)
    text.push(plain(`\n\nLast output of ${cp.stepId}:\n`), code(view.outputTail));
  if (cp.expiredAt !== undefined) {
    text.push(plain(`\n\n⌛ Expired at ${timeWords(cp.expiredAt)}; kept open for a human.`));
  }
  const fields = baseFields(view);
  if (cp.digestLabel !== undefined) fields.push({ label: 'Content', value: cp.digestLabel });
  fields.push({ label: 'Policy', value: policyWords(cp.policy) });
  if (cp.expiresAt !== undefined && cp.expiredAt === undefined) {
    fields.push({ label: 'Expires', value: timeWords(cp.expiresAt) });
  }
  const votes = votesSays(cp);
  if (votes !== undefined) fields.push(richField('Votes', votes));
  if (view.changes !== undefined && cp.answers.includes('loop')) {
    fields.push({ label: 'Request changes', value: changesWords(view.changes) });
  }
  if (view.notes !== undefined && view.notes.length > 0) {
    fields.push(richField('Notes', pendingNotesSays(view.notes)));
  }
  return {
    text: rich(...text),
    fields,
    buttons: checkpointButtons(token, cp.answers, { ...buttons, diff: view.diff === true }),
  };
}

/** The changed-files list (none when only a note was saved), then why the diff is missing. */
function changedSays(stepId: string, changed: StepChanges): RichSegment[] {
  const out: RichSegment[] = [];
  if (changed.base !== '') {
    out.push(
      plain(`\n\nChanged by ${stepId} (vs ${changed.base.slice(0, 7)}):\n`),
      code(changedFilesLines(changed).join('\n')),
    );
  }
  if (typeof changed.note === 'string') {
    out.push(plain(`${out.length > 0 ? '\n' : '\n\n'}${clip(changed.note, MAX_REASON)}`));
  }
  return out;
}

/** "1 note from @carol will go with the decision", "3 notes from @carol and @bob will …". */
export function pendingNotesWords(authors: readonly Actor[]): string {
  return plainTextOf(pendingNotesSays(authors));
}

/** pendingNotesWords as message text: the authors as personSegment shows them in each chat. */
export function pendingNotesSays(authors: readonly Actor[]): RichSegment[] {
  const people = [...new Map(authors.map((a) => [a.id, a])).values()];
  const n = authors.length;
  const notes = `${n} ${n === 1 ? 'note' : 'notes'}`;
  return [plain(`${notes} from `), ...namesSegments(people), plain(' will go with the decision')];
}

/** "1 of 3 used; the step runs again with your reason", or the limit reached. */
export function changesWords(c: { used: number; max: number }): string {
  if (c.used >= c.max) return `limit reached (${c.used} of ${c.max} used): approve or reject`;
  return `${c.used} of ${c.max} used; the step runs again with your reason`;
}

/** The closed message: the decision (or withdrawal), who, when and why; no buttons. */
export function renderClosedCheckpoint(view: CheckpointView): OutgoingMessage {
  const cp = view.checkpoint;
  const text: RichSegment[] = [plain(`${closedIcon(cp)} `), bold(`Checkpoint ${cp.id}`)];
  text.push(plain(` — run ${view.runId}\n`), ...outcomeSays(cp));
  text.push(plain(`\n\n${clip(cp.reason, MAX_REASON)}`), ...agentSays(view));
  const fields = baseFields(view);
  const bound = cp.decision?.digest;
  if (bound !== undefined) {
    // The label names the version decided when it is that one; else the digest's own short form.
    const label = cp.digest === bound && cp.digestLabel ? cp.digestLabel : bound.slice(0, 6);
    fields.push({ label: 'Content', value: label });
  }
  const why = cp.decision?.reason ?? cp.withdrawn?.reason;
  if (why !== undefined) fields.push({ label: 'Reason given', value: clip(why, MAX_REASON) });
  return { text: rich(...text), fields, buttons: [] };
}

/** "Approved by Alice and Bob at 2026-11-29 14:30 UTC", "Expired at …, then rejected", … */
export function outcomeWords(cp: CheckpointState): string {
  return plainTextOf(outcomeSays(cp));
}

/** outcomeWords as message text: the deciders as personSegment shows them in each chat. */
export function outcomeSays(cp: CheckpointState): RichSegment[] {
  const d = cp.decision;
  if (d === undefined) {
    // Re-opened after it expired (reopen): it stays shown as expired; a new checkpoint follows.
    if (cp.expiredAt !== undefined && cp.withdrawn) {
      return [
        plain(
          `Expired at ${timeWords(cp.expiredAt)}; re-opened at ${timeWords(cp.withdrawn.at)} as a new checkpoint`,
        ),
      ];
    }
    const at = cp.withdrawn ? ` at ${timeWords(cp.withdrawn.at)}` : '';
    return [plain(`Withdrawn${at} (no decision needed any more)`)];
  }
  const when = timeWords(d.at);
  if (byExpiry(d.by, d.reason)) {
    return [plain(`Expired at ${when}, then ${PAST[d.answer]} automatically`)];
  }
  return [plain(`${capital(PAST[d.answer])} by `), ...namesSegments(d.by), plain(` at ${when}`)];
}

const PAST: Readonly<Record<string, string>> = {
  approve: 'approved',
  reject: 'rejected',
  loop: 'sent back with changes requested',
  'expired-keep': 'expired',
};

function closedIcon(cp: CheckpointState): string {
  const d = cp.decision;
  if (d === undefined) return '➖';
  if (byExpiry(d.by, d.reason)) return '⌛';
  return d.answer === 'approve' ? '✅' : d.answer === 'reject' ? '❌' : '↩️';
}

/** An expiry decides in the system's name (see decideExpireCheckpoint). */
export function byExpiry(by: readonly Actor[], reason: string | undefined): boolean {
  return (
    by.length > 0 && by.every((a) => a.id === 'system') && (reason ?? '').startsWith('expired')
  );
}

function agentSays(view: CheckpointView): RichSegment[] {
  return view.agentReason ? [plain(`\nThe agent says: ${clip(view.agentReason, MAX_REASON)}`)] : [];
}

function baseFields(view: CheckpointView): MessageField[] {
  const fields: MessageField[] = [{ label: 'Step', value: kindWords(view.checkpoint) }];
  if (view.logs !== undefined) {
    const label = /^https?:/.test(view.logs) ? 'Diff and log' : 'Logs';
    fields.push({ label, value: view.logs });
  }
  if (view.permissions !== undefined)
    fields.push({ label: 'Permissions', value: view.permissions });
  return fields;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** What a counted vote did, for the voter's private answer: "approved — 1 of 2 approvals". */
export function voteResultWords(cp: CheckpointState): string {
  const approvals = cp.votes.filter((v) => v.answer === 'approve').length;
  const count = `${approvals} of ${cp.policy.approvals} approval${cp.policy.approvals === 1 ? '' : 's'}`;
  switch (cp.decision?.answer) {
    case undefined:
      return `approved — ${count}`;
    case 'approve':
      return `approved — ${count}; the run moves on`;
    case 'reject':
      return 'rejected — the run is stopped';
    default:
      return 'changes requested — the step runs again with your reason';
  }
}
