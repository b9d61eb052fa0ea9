/**
 * Tool approvals in chat (`permissions: ask`), message side. The approval MCP server runs in the
 * agent's process tree, writes requests to bridge.db and pushes each one here (`awaitDecision`,
 * through the control socket): it is posted to every chat following its run at once, and the
 * server is answered the moment it is decided, before the copies are edited (in any chat, on
 * any platform). A slower look (every `intervalMs`) catches what no push brought (requests made
 * while no bridge ran) and denies a request nobody answered by its expiry (also when its MCP
 * server is gone). Copies and tokens live in checkpoint_messages under the id
 * `tool:<request id>`, so presses after a restart still resolve.
 */
import type { ToolApprovalRecord } from '../db/repositories/tool-approvals.ts';
import { ruleFor } from '../jobs/runner/approvals/protocol.ts';
import { type ChatOpsDeps, channelFor } from './context.ts';
import { PeriodicLook } from './periodic-look.ts';
import { declaredPermissions } from './step-permissions.ts';
import { renderClosedTool, renderOpenTool, TOOL_PREFIX } from './tool-approval-message.ts';

/** The rule "Allow for this run" creates for a request. */
export function ruleOf(r: ToolApprovalRecord): string {
  return ruleFor({ toolName: r.tool, input: r.input });
}

/** Posts, edits and expires tool approval messages. */
export class ToolApprovalPresenter {
  readonly #deps: ChatOpsDeps;
  readonly #followers: (runId: string) => Promise<string[]>;
  readonly #looks: PeriodicLook;
  /** Approval servers waiting for a request's decision, by request id. */
  readonly #waiters = new Map<string, Set<() => void>>();
  /** Posting and looking run one at a time, so a request is never posted twice. */
  #serial: Promise<unknown> = Promise.resolve();
  /** When this process started: a copy stored before it and never queued died with its process. */
  readonly #since = Date.now();

  /** `followers(runId)`: the chats that follow a run (where its checkpoints go). */
  constructor(
    deps: ChatOpsDeps,
    followers: (runId: string) => Promise<string[]>,
    intervalMs: number,
  ) {
    this.#deps = deps;
    this.#followers = followers;
    this.#looks = new PeriodicLook(intervalMs, () =>
      this.#inTurn(() => this.#look()).catch((err: unknown) =>
        this.#deps.log.error({ err }, 'chatops: tool approvals'),
      ),
    );
  }

  /** Starts the periodic looks. */
  start(): void {
    this.#looks.start();
  }

  /** Stops the looks and waits for the one in progress. */
  async stop(): Promise<void> {
    await this.#looks.stop();
  }

  /**
   * Shows request `id` now (if no chat has it yet) and resolves 'decided' once it is decided
   * or expired; 'unknown' for no such request or when `signal` aborts (the asker hung up).
   */
  async awaitDecision(id: string, signal: AbortSignal): Promise<'decided' | 'unknown'> {
    const decided = new Promise<'decided' | 'unknown'>((resolve) => {
      const done = () => {
        this.#waiters.get(id)?.delete(done);
        if (this.#waiters.get(id)?.size === 0) this.#waiters.delete(id);
        resolve(signal.aborted ? 'unknown' : 'decided');
      };
      // Registered before the request is read: a decision in between is not missed.
      const set = this.#waiters.get(id) ?? new Set();
      set.add(done);
      this.#waiters.set(id, set);
      signal.addEventListener('abort', done, { once: true });
    });
    const r = await this.#deps.repos.toolApprovals.get(id);
    if (r === null) {
      this.#wake(id);
      return 'unknown';
    }
    if (r.status !== 'pending') this.#wake(id);
    else await this.#inTurn(() => this.#postIfNew(r));
    return decided;
  }

  /** One look: expire overdue requests, post new ones, close the copies of decided ones. */
  tick(): Promise<void> {
    return this.#inTurn(() => this.#look());
  }

  #inTurn<T>(work: () => Promise<T>): Promise<T> {
    const turn = this.#serial.then(work);
    this.#serial = turn.catch(() => undefined);
    return turn;
  }

  /** Tells the servers waiting for request `id` that it is decided. */
  #wake(id: string): void {
    for (const done of [...(this.#waiters.get(id) ?? [])]) done();
  }

  /**
   * Posts a pending request to the chats without a copy of it. A copy stored by a process that
   * died before its send was queued (no message id, nothing in the outbox) will never be sent:
   * it is dropped and its chat gets the request now, else the agent waits for an answer nobody
   * is asked for until the request expires (issue 39). A copy whose send is still queued is kept.
   */
  async #postIfNew(r: ToolApprovalRecord): Promise<void> {
    const copies = this.#deps.repos.checkpointMessages;
    const rows = await copies.listByCheckpoint(r.runId, TOOL_PREFIX + r.id);
    const removed = new Set<number>();
    for (const row of rows) {
      const neverSent =
        row.messageRef === null &&
        row.state === 'open' &&
        row.createdAt < this.#since &&
        !(await copies.sendInFlight(row.id));
      if (neverSent && (await copies.removeUnsent(row.id))) removed.add(row.id);
    }
    const kept = rows.filter((row) => !removed.has(row.id));
    if (kept.length === 0) return this.#post(r);
    const have = new Set(kept.map((row) => row.chatRef));
    const lost = rows.filter((row) => removed.has(row.id) && !have.has(row.chatRef));
    if (lost.length > 0) await this.#post(r, new Set(lost.map((row) => row.chatRef)));
  }

  async #look(): Promise<void> {
    const { repos } = this.#deps;
    const now = this.#deps.clock().getTime();
    for (const r of await repos.toolApprovals.pending()) {
      if (r.expiresAt <= now) {
        if (await repos.toolApprovals.expire(r.id)) this.#wake(r.id);
        continue;
      }
      await this.#postIfNew(r);
    }
    const open = await repos.checkpointMessages.listOpenWithPrefix(TOOL_PREFIX);
    const ids = new Set(open.map((m) => m.checkpointId.slice(TOOL_PREFIX.length)));
    for (const id of ids) {
      const r = await repos.toolApprovals.get(id);
      if (r !== null && r.status !== 'pending') await this.refresh(r);
    }
  }

  /** Posts the request to the run's chats (`only`: those of them). */
  async #post(r: ToolApprovalRecord, only?: ReadonlySet<string>): Promise<void> {
    const { repos, log } = this.#deps;
    const fourEyes = await this.#fourEyes(r);
    for (const chat of await this.#followers(r.runId)) {
      if (only !== undefined && !only.has(chat)) continue;
      const channel = channelFor(this.#deps, chat);
      if (!channel) continue;
      try {
        // Stored before sending, so a press racing the send finds its token.
        const row = await repos.checkpointMessages.add({
          runId: r.runId,
          checkpointId: TOOL_PREFIX + r.id,
          chatRef: chat,
        });
        const ref = await channel.send(chat, {
          ...renderOpenTool(r, row.buttonToken, ruleOf(r), fourEyes),
          owner: { kind: 'checkpoint', id: row.id },
        });
        await repos.checkpointMessages.setMessageRef(row.id, ref);
      } catch (err) {
        log.error({ err, runId: r.runId, chat }, 'chatops: could not post the tool approval');
      }
    }
  }

  /** True when the step's declared posture has four-eyes (false when the run is unreadable). */
  async #fourEyes(r: ToolApprovalRecord): Promise<boolean> {
    try {
      const state = await this.#deps.orchestrator.getRun(r.runId);
      return (await declaredPermissions(this.#deps.repos, state, r.stepId))?.fourEyes === true;
    } catch (err) {
      this.#deps.log.warn({ err, runId: r.runId }, 'chatops: no run for a tool approval');
      return false;
    }
  }

  /** Answers the waiting server, then edits every copy of a decided request and closes them. */
  async refresh(r: ToolApprovalRecord): Promise<void> {
    const { repos, log } = this.#deps;
    // The agent is waiting for the answer, which is in bridge.db already; the edits may queue.
    this.#wake(r.id);
    const id = TOOL_PREFIX + r.id;
    // Decided by a person's press: they are looking at that message (an expiry is not waited on).
    const urgency = r.decidedBy === 'system' ? 'decision' : 'interactive';
    const decider = await repos.people.person(r.decidedBy ?? '');
    for (const row of await repos.checkpointMessages.listByCheckpoint(r.runId, id)) {
      const channel = channelFor(this.#deps, row.chatRef);
      if (row.messageRef === null || !channel) continue;
      const shown = { kind: 'decision', id: row.id } as const;
      await channel
        .edit(row.messageRef, { ...renderClosedTool(r, decider), owner: shown, urgency })
        .then(() => repos.checkpointMessages.markShown(row.id))
        .catch((err: unknown) => {
          log.warn({ err, runId: r.runId, chat: row.chatRef }, 'chatops: tool approval not edited');
        });
    }
    if (r.decidedBy === 'system') await repos.checkpointMessages.markExpired(r.runId, id);
    else await repos.checkpointMessages.markDecided(r.runId, id);
  }
}
