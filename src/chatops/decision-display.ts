/**
 * Every decided or expired checkpoint shows its decision (issue 39): a copy whose message still
 * shows live buttons (its decision's edit never confirmed: the process died first, or the copy's
 * message id became known only when the next process delivered it) is edited to the decision; a
 * copy whose message id is unknown and whose send is no longer queued is shown the decision in a
 * new message, once. Looked at on start and after every confirmed checkpoint send.
 */

import type { CheckpointMessageRecord } from '../db/repositories/index.ts';
import type { ChatOpsDeps } from './context.ts';
import { channelFor } from './context.ts';
import { type CheckpointPresenter, currentCopies } from './presenter.ts';
import { SerialPass } from './serial-pass.ts';
import { TOOL_PREFIX } from './tool-approval-message.ts';
import type { ToolApprovalPresenter } from './tool-approval-presenter.ts';

/** Runs a task in a run's chatops order (ChatOps' per-run chain). */
type InOrder = (runId: string, task: () => Promise<void>, failure: string) => Promise<void>;

/** Finds closed checkpoint copies that do not show their decision and shows it. */
export class DecisionDisplay {
  readonly #deps: ChatOpsDeps;
  readonly #presenter: CheckpointPresenter;
  readonly #tools: ToolApprovalPresenter;
  readonly #inOrder: InOrder;
  /** Copies tried in this process (`id:ref`): one whose edit fails is not retried at every look. */
  readonly #tried = new Set<string>();
  readonly #passes = new SerialPass(
    () => this.#look(),
    (err: unknown) => this.#deps.log.error({ err }, 'chatops: decisions not shown'),
  );

  /** `inOrder` keeps each run's edits in the order of its other chatops work. */
  constructor(
    deps: ChatOpsDeps,
    presenter: CheckpointPresenter,
    tools: ToolApprovalPresenter,
    inOrder: InOrder,
  ) {
    this.#deps = deps;
    this.#presenter = presenter;
    this.#tools = tools;
    this.#inOrder = inOrder;
  }

  /**
   * Closes the copies among `rows` (open in bridge.db) whose checkpoint the engine closed: the
   * process that decided it was killed before it marked and edited them, and no later update
   * would. Each checkpoint is shown its decision (presenter.refresh) in its run's order.
   */
  closeStale(rows: readonly CheckpointMessageRecord[], urgency: 'interactive' | 'decision'): void {
    const seen = new Set<string>();
    for (const row of rows) {
      const key = `${row.runId}\n${row.checkpointId}`;
      if (row.checkpointId.startsWith(TOOL_PREFIX) || seen.has(key)) continue;
      seen.add(key);
      void this.#inOrder(
        row.runId,
        async () => {
          const state = await this.#deps.orchestrator.getRun(row.runId).catch(() => undefined);
          // A run no longer readable has no decision to show.
          if (state === undefined || state.checkpoint?.id === row.checkpointId) return;
          await this.#presenter.refresh(state, row.checkpointId, urgency);
        },
        'chatops: a closed checkpoint’s copies could not be shown closed',
      );
    }
  }

  /** Schedules a look (one at a time; asked during one, another follows it). */
  schedule(): void {
    this.#passes.schedule();
  }

  /** Resolves once no look runs (tests, stop). */
  idle(): Promise<void> {
    return this.#passes.idle();
  }

  async #look(): Promise<void> {
    const { repos } = this.#deps;
    const rows = await repos.checkpointMessages.unshownDecisions();
    const checkpoints = new Map<string, { runId: string; checkpointId: string }>();
    for (const row of rows) {
      if (row.inFlight || this.#tried.has(`${row.id}:${row.messageRef}`)) continue;
      if (!channelFor(this.#deps, row.chatRef)) continue;
      checkpoints.set(`${row.runId}\n${row.checkpointId}`, row);
    }
    for (const { runId, checkpointId } of checkpoints.values()) {
      await this.#inOrder(
        runId,
        () => this.#show(runId, checkpointId),
        'chatops: a decision could not be shown',
      );
    }
  }

  /** Shows one closed checkpoint's decision on every current copy that does not show it yet. */
  async #show(runId: string, checkpointId: string): Promise<void> {
    const { repos, orchestrator } = this.#deps;
    const all = await repos.checkpointMessages.listByCheckpoint(runId, checkpointId);
    const current = new Set(currentCopies(all).map((r) => r.id));
    const unshown = (await repos.checkpointMessages.unshownDecisions()).filter(
      (r) => r.runId === runId && r.checkpointId === checkpointId && !r.inFlight,
    );
    for (const row of unshown) {
      // A superseded copy's message went with the restart that lost it: nothing to show there.
      if (!current.has(row.id)) await repos.checkpointMessages.markShown(row.id);
    }
    const todo = unshown.filter(
      (r) => current.has(r.id) && !this.#tried.has(`${r.id}:${r.messageRef}`),
    );
    if (todo.length === 0) return;
    for (const r of todo) this.#tried.add(`${r.id}:${r.messageRef}`);
    if (checkpointId.startsWith(TOOL_PREFIX)) {
      const request = await repos.toolApprovals.get(checkpointId.slice(TOOL_PREFIX.length));
      if (request === null || request.status === 'pending') return;
      // Edits every copy with an id; one without is not re-posted (tool requests are short-lived).
      await this.#tools.refresh(request);
      for (const row of todo) {
        if (row.messageRef === null) await repos.checkpointMessages.markShown(row.id);
      }
      return;
    }
    const state = await orchestrator.getRun(runId);
    if (state.checkpoint?.id === checkpointId) return;
    if (todo.some((r) => r.messageRef !== null)) await this.#presenter.refresh(state, checkpointId);
    for (const row of todo) {
      if (row.messageRef !== null) continue;
      try {
        await this.#presenter.postClosed(state, row);
      } finally {
        // Once: a chat that refuses it is not asked again at every start.
        await repos.checkpointMessages.markShown(row.id);
      }
    }
  }
}
