/**
 * A layout may let its users steer a run by editing one of its files by hand (codemachine's
 * `.codemachine/template.json`: remove steps from completedSteps to re-run them, clear it or
 * delete the file to start over, mark the current step, or a later one, completed to skip it).
 * The layout's `handEdits.check` hook reads the file and says which commands carry the edit out;
 * they are committed here. A running bridge's supervisor applies an edit as soon as it sees it;
 * every command to the run and start-up check too. The edit is recorded in the ledger as a human
 * action from a file edit; an unreadable file is reported and never resets the run.
 */
import path from 'node:path';
import { layoutModule } from '../../engine/layouts/index.ts';
import { isTerminal } from '../../engine/model.ts';
import type { Log } from '../../log.ts';
import { errorMessage } from '../queue/outcome.ts';
import type { RunDriver } from './run-driver.ts';

/** What a check of the watched file did; `text` says why for 'unreadable' and 'ignored'. */
export type HandEditResult =
  | { kind: 'none' }
  | { kind: 'applied'; edit: string }
  | { kind: 'unreadable' | 'ignored'; text: string };

/** Applies a pending hand edit of the run's watched file; returns what was applied. */
export async function applyHandEdit(
  driver: RunDriver,
  runId: string,
  log: Log,
): Promise<HandEditResult> {
  const state = await driver.peek(runId);
  const hooks = layoutModule(state.layout)?.handEdits;
  if (hooks?.check === undefined || isTerminal(state.status)) return { kind: 'none' };
  const file = path.basename(hooks.watchedFile(state.workspace));
  const check = await hooks.check(state);
  if (check.kind === 'unreadable') {
    log.warn({ runId, reason: check.reason }, `${file} cannot be read; the run keeps its progress`);
    return { kind: 'unreadable', text: check.text };
  }
  if (check.kind !== 'apply') return check;
  for (const [i, command] of check.commands.entries()) {
    // Keyed by the state it was seen in, so a retry after a crash does not apply it twice.
    const key =
      i === 0 ? `file-edit:${runId}:${state.seq}` : `file-edit:${runId}:${state.seq}:${i}`;
    const result = await driver.commit(runId, key, command);
    if (!result.ok) {
      log.warn({ runId, reason: result.rejection.message }, `${file} edit not applied`);
      return { kind: 'ignored', text: `${file} edit not applied: ${result.rejection.message}` };
    }
  }
  log.info({ runId, edit: check.edit }, `applied a hand edit of ${file}`);
  return { kind: 'applied', edit: check.edit };
}

/**
 * At start-up: applies what was edited by hand while no bridge ran, in every unfinished run of
 * a layout with hand edits (`runs`: the runs index's records). A run that cannot be checked is
 * logged and left as it is.
 */
export async function applyHandEditsAtStart(
  driver: RunDriver,
  runs: readonly { id: string; layout: string }[],
  log: Log,
): Promise<void> {
  for (const run of runs) {
    if (layoutModule(run.layout)?.handEdits === undefined) continue;
    await applyHandEdit(driver, run.id, log).catch((err: unknown) =>
      log.warn({ runId: run.id, err: errorMessage(err) }, 'template.json not checked'),
    );
  }
}
