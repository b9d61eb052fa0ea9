/**
 * Follows workspaces whose format's own tools write a log (codexclaw's `.codexclaw/ledger.jsonl`,
 * the layouts table's `follow` hooks; `phasebridge follow`, `bind … --follow`): every tick, the
 * rows appended since the offset kept in bridge.db are
 * announced as new messages in the chats bound to that workspace. Rows of sessions that are runs
 * of ours are left to the runs' own status messages. Read-only: codexclaw's files are never
 * written. At least once: the offset is stored after the announcements went out.
 */
import { resolve } from 'node:path';
import { followedFormat } from '../engine/layouts/index.ts';
import { bindingChatRef, type ChatOpsDeps, channelFor } from './context.ts';
import { text } from './handlers/types.ts';
import { PeriodicLook } from './periodic-look.ts';

/** Polls the followed workspaces and announces their new ledger rows. */
export class WorkspaceFollower {
  readonly #deps: ChatOpsDeps;
  readonly #looks: PeriodicLook;

  /** `intervalMs`: time between two looks at every followed ledger. */
  constructor(deps: ChatOpsDeps, intervalMs: number) {
    this.#deps = deps;
    this.#looks = new PeriodicLook(intervalMs, () => this.tick());
  }

  /** Starts the periodic looks. */
  start(): void {
    this.#looks.start();
  }

  /** Stops the looks and waits for the one in progress. */
  async stop(): Promise<void> {
    await this.#looks.stop();
  }

  /** One look at every followed workspace; one workspace's failure never stops the others. */
  async tick(): Promise<void> {
    const { repos, log } = this.#deps;
    for (const f of await repos.followed.list()) {
      try {
        await this.#look(f.workspace, f.offset);
      } catch (err) {
        log.warn({ err, workspace: f.workspace }, 'chatops: followed workspace not read');
      }
    }
  }

  async #look(workspace: string, offset: number): Promise<void> {
    const { repos, log } = this.#deps;
    const follow = followedFormat();
    if (follow === undefined) return;
    const tail = await follow.tail(workspace, offset);
    if (tail.next === offset) return;
    if (tail.reset) log.warn({ workspace }, 'chatops: followed ledger was cut back; following on');
    const chats = await this.#chatsOf(workspace);
    for (const row of tail.rows) {
      // A session that is a run of ours shows in that run's status message already.
      if (typeof row.sessionId === 'string' && (await repos.runs.get(row.sessionId))) continue;
      const message = text(follow.rowText(workspace, row));
      for (const chat of chats) {
        await channelFor(this.#deps, chat)
          ?.send(chat, message)
          .catch((err: unknown) => log.warn({ err, chat }, 'chatops: followed row not announced'));
      }
    }
    await repos.followed.setOffset(workspace, tail.next);
  }

  async #chatsOf(workspace: string): Promise<string[]> {
    const ws = resolve(workspace);
    const bindings = await this.#deps.repos.bindings.list();
    return bindings
      .filter((b) => resolve(b.workspace) === ws)
      .map(bindingChatRef)
      .filter((c) => channelFor(this.#deps, c) !== undefined);
  }
}
