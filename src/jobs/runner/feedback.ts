/**
 * Reviewers' feedback as the agent sees it: a "Feedback from reviewers" prompt section (who,
 * when, what; oldest first), the message a resumed session gets (only what is new since its last
 * attempt), and the JSON file named by PHASEBRIDGE_FEEDBACK_FILE.
 */
import path from 'node:path';
import { writeFileAtomic } from '../../engine/ledger/atomic-write.ts';
import type { FeedbackItem } from '../orchestrator/job-payload.ts';
import { confinedRoot } from './output-sink.ts';

/** The env variable naming the feedback file. */
export const FEEDBACK_FILE_ENV = 'PHASEBRIDGE_FEEDBACK_FILE';

const KIND_WORDS: Readonly<Record<FeedbackItem['kind'], string>> = {
  changes: 'requested changes',
  approval: 'approved with a note',
  guidance: 'guidance',
};

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

function line(f: FeedbackItem): string {
  const text = f.text.replace(/\r?\n/g, '\n  ');
  return `- ${f.by} (${KIND_WORDS[f.kind]}, ${when(f.at)}): ${text}`;
}

/** The prompt section listing every item, oldest first; '' when there is none. */
export function feedbackSection(items: readonly FeedbackItem[]): string {
  if (items.length === 0) return '';
  return ['## Feedback from reviewers', '', ...items.map(line)].join('\n');
}

/** The prompt of an attempt: the step's prompt, then the feedback section. */
export function promptWithFeedback(prompt: string, items: readonly FeedbackItem[]): string {
  const section = feedbackSection(items);
  return section === '' ? prompt : `${prompt}\n\n${section}\n`;
}

/** The next user message of a resumed session: the feedback given since its last attempt. */
export function resumeMessage(items: readonly FeedbackItem[]): string {
  const fresh = items.filter((f) => f.fresh);
  return [
    'Reviewers looked at your work on this step and sent it back with this feedback:',
    '',
    ...(fresh.length > 0 ? fresh : items).map(line),
    '',
    'Address it, then finish the step as before (including the directive file).',
  ].join('\n');
}

/** Path of the feedback file of an attempt: `<logdir>/feedback-<step>-<attempt>.json`. */
export function feedbackFilePath(logFile: string, stepId: string, attempt: number): string {
  const step = stepId.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(path.dirname(logFile), `feedback-${step}-${attempt}.json`);
}

/** Writes the feedback file (0600, inside the workspace) and returns its path. */
export function writeFeedbackFile(
  workspace: string,
  file: string,
  items: readonly FeedbackItem[],
): string {
  const body = items.map(({ kind, by, byId, at, text, fresh }) => ({
    kind,
    by,
    byId,
    at,
    text,
    fresh,
  }));
  writeFileAtomic(file, `${JSON.stringify({ feedback: body }, null, 2)}\n`, {
    root: confinedRoot(workspace, file),
    mkdirs: true,
    mode: 0o600,
  });
  return file;
}
