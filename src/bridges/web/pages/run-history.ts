/**
 * The run page's decisions (who answered each checkpoint, when and why, or why it was withdrawn)
 * and the feedback and guidance people gave in their votes (pure rendering).
 */
import { personName } from '../../../engine/person-name.ts';
import { escapeHtml as e } from '../outbound.ts';
import type { CheckpointView, RunView } from '../runs-source.ts';
import { relativeTime, statusBadge } from './runs.ts';

const WORDS: Readonly<Record<string, string>> = {
  approve: 'approved',
  reject: 'rejected',
  loop: 'changes requested',
  'expired-keep': 'expired (kept open)',
};

/** An answer as people say it: approved, rejected, changes requested. */
export function answerWords(answer: string): string {
  return WORDS[answer] ?? answer;
}

const badgeClass = (answer: string) =>
  answer === 'approve' ? 'approved' : answer === 'reject' ? 'rejected' : 'changes';

function decisionItem(cp: CheckpointView, now: number): string | undefined {
  if (cp.decision) {
    const d = cp.decision;
    const by = d.by.map((a) => e(personName(a))).join(', ') || 'the bridge';
    const why = d.reason ? ` — “${e(d.reason)}”` : '';
    return `<li>${statusBadge(badgeClass(d.answer), answerWords(d.answer))} checkpoint ${e(cp.id)} by ${by} ${relativeTime(d.at, now)}${why}</li>`;
  }
  if (cp.withdrawn) {
    return `<li>${statusBadge('withdrawn', 'withdrawn')} checkpoint ${e(cp.id)} ${relativeTime(cp.withdrawn.at, now)} — ${e(cp.withdrawn.reason)}</li>`;
  }
  return undefined;
}

/** The decisions and feedback lists (empty sections say so). */
export function historySection(run: RunView, now: number): string {
  const all = [...(run.checkpoints ?? []), ...(run.checkpoint ? [run.checkpoint] : [])];
  const decisions = all.map((cp) => decisionItem(cp, now)).filter((x): x is string => !!x);
  const feedback = all.flatMap((cp) =>
    cp.votes
      .filter((v) => v.reason)
      .map(
        (v) =>
          `<li><b>${e(v.answer === 'loop' ? 'Feedback' : v.answer === 'reject' ? 'Rejection' : 'Guidance')}</b> on ${e(cp.id)} by ${e(personName(v.actor))} ${relativeTime(v.at, now)}: <q>${e(v.reason ?? '')}</q></li>`,
      ),
  );
  const list = (items: string[], none: string, id: string) =>
    items.length > 0
      ? `<ul id="${id}">${items.join('')}</ul>`
      : `<p class="muted" id="${id}">${none}</p>`;
  return `<h2>Decisions</h2>${list(decisions, 'No checkpoint decided yet.', 'decisions')}<h2>Feedback and guidance</h2>${list(feedback, 'No feedback given yet.', 'feedback')}`;
}
