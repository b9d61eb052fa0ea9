/**
 * Tool approvals in chat (`permissions: ask`), message side. The approval MCP server runs in the
 * agent's process tree and writes requests to bridge.db; this presenter looks for them (every
 * `intervalMs`), posts each pending one to every chat following its run, edits every copy when
 * it is decided (in any chat, on any platform), and denies a request nobody answered by its
 * expiry (also when its MCP server is gone). Copies and tokens live in checkpoint_messages under
 * the id `tool:<request id>`, so presses after a restart still resolve.
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

  /** `followers(runId)`: the chats that follow a run (where its checkpoints go). */
  constructor(
    deps: ChatOpsDeps,
    followers: (runId: string) => Promise<string[]>,
    intervalMs: number,
  ) {
    this.#deps = deps;
    this.#followers = followers;
    this.#looks = new PeriodicLook(intervalMs, () =>
      this.tick().catch((err: unknown) => this.#deps.log.error({ err }, 'chatops: tool approvals')),
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

  /** One look: expire overdue requests, post new ones, close the copies of decided ones. */
  async tick(): Promise<void> {
    const { repos } = this.#deps;
    const now = this.#deps.clock().getTime();
    for (const r of await repos.toolApprovals.pending()) {
      if (r.expiresAt <= now) {
        await repos.toolApprovals.expire(r.id);
        continue;
      }
      const copies = await repos.checkpointMessages.listByCheckpoint(r.runId, TOOL_PREFIX + r.id);
      if (copies.length === 0) await this.#post(r);
    }
    const open = await repos.checkpointMessages.listOpenWithPrefix(TOOL_PREFIX);
    const ids = new Set(open.map((m) => m.checkpointId.slice(TOOL_PREFIX.length)));
    for (const id of ids) {
      const r = await repos.toolApprovals.get(id);
      if (r !== null && r.status !== 'pending') await this.refresh(r);
    }
  }

  async #post(r: ToolApprovalRecord): Promise<void> {
    const { repos, log } = this.#deps;
    const fourEyes = await this.#fourEyes(r);
    for (const chat of await this.#followers(r.runId)) {
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

  /** Edits every copy of a decided request to its outcome and closes them. */
  async refresh(r: ToolApprovalRecord): Promise<void> {
    const { repos, log } = this.#deps;
    const id = TOOL_PREFIX + r.id;
    for (const row of await repos.checkpointMessages.listByCheckpoint(r.runId, id)) {
      const channel = channelFor(this.#deps, row.chatRef);
      if (row.messageRef === null || !channel) continue;
      const shown = { kind: 'decision', id: row.id } as const;
      await channel
        .edit(row.messageRef, { ...renderClosedTool(r), owner: shown })
        .then(() => repos.checkpointMessages.markShown(row.id))
        .catch((err: unknown) => {
          log.warn({ err, runId: r.runId, chat: row.chatRef }, 'chatops: tool approval not edited');
        });
    }
    if (r.decidedBy === 'system') await repos.checkpointMessages.markExpired(r.runId, id);
    else await repos.checkpointMessages.markDecided(r.runId, id);
  }
}
