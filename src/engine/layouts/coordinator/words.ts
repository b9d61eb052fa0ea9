/**
 * What a coordinator session (seed 004) tells the chat when it ends: the summary, the
 * verification figures, the tasks and the workers that ran them, and what became of
 * `.coordinator/` (archived or removed, per `coordinator.onComplete`). Pure.
 */
import type { RunState } from '../../model.ts';
import { coordinatorState } from './format.ts';

/** The lines added under a coordinator run's outcome. */
export function coordinatorOutcomeLines(state: RunState): string[] {
  const doc = coordinatorState(state);
  const lines: string[] = [];
  if (doc.summary !== null) lines.push(`Summary: ${doc.summary}`);
  const v = doc.verification;
  if (v.status !== null) {
    lines.push(
      `Verification ${v.status}: ${v.tests_passed ?? '?'} of ${v.tests_total ?? '?'} tests passed, build ${v.build_status ?? 'unknown'}`,
    );
  }
  const t = doc.tasks;
  const total = t.queued.length + t.in_progress.length + t.completed.length + t.failed.length;
  if (total > 0) {
    const workers = [...new Set(doc.workers.map((w) => w.id))].sort();
    const failed = t.failed.length > 0 ? `, failed: ${t.failed.join(', ')}` : '';
    lines.push(
      `Tasks: ${t.completed.length} of ${total} completed${failed}${workers.length > 0 ? ` by ${workers.join(', ')}` : ''}`,
    );
  }
  if (state.status === 'completed') {
    lines.push(
      state.workflow.coordinator?.onComplete === 'remove'
        ? 'Session .coordinator/ removed'
        : 'Session .coordinator/ archived as .coordinator.archive.<unix time>',
    );
  }
  return lines;
}
