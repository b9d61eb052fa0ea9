/**
 * Follows workspaces whose `.codexclaw/` codexclaw itself writes (`phasebridge follow`, `bind …
 * --follow`): every tick, the ledger rows appended since the offset kept in bridge.db are
 * announced as new messages in the chats bound to that workspace. Rows of sessions that are runs
 * of ours are left to the runs' own status messages. Read-only: codexclaw's files are never
 * written. At least once: the offset is stored after the announcements went out.
 */
import { resolve } from 'node:path';
import { readLedgerTail } from '../engine/layouts/codexclaw/follow.ts';
import { bindingChatRef, type ChatOpsDeps, channelFor } from './context.ts';
import { text } from './handlers/types.ts';
import { PeriodicLook } from './periodic-look.ts';

/** How a followed row reads in chat: session, move, why, who, evidence. */
export function followedRowText(workspace: string, row: Record<string, unknown>): string {
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
  const session = str(row.sessionId) ?? '(no session id)';
  const from = str(row.from) ?? '∅';
  const reason = str(row.reason) ?? 'no reason';
  const to = reason === 'done' ? `D (done → ${str(row.to) ?? '?'})` : (str(row.to) ?? '?');
  const who = row.actor === 'human' ? 'a human' : 'the agent';
  const override = row.override === true ? ' · override' : '';
  const evidence = str(row.evidence) ? ` · “${str(row.evidence)}”` : '';
  return `🔁 codexclaw session ${session} in ${workspace}: ${from} → ${to} · ${reason} by ${who}${override}${evidence}`;
}

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
    const tail = readLedgerTail(workspace, offset);
    if (tail.next === offset) return;
    if (tail.reset) log.warn({ workspace }, 'chatops: followed ledger was cut back; following on');
    const chats = await this.#chatsOf(workspace);
    for (const row of tail.rows) {
      // A session that is a run of ours shows in that run's status message already.
      if (typeof row.sessionId === 'string' && (await repos.runs.get(row.sessionId))) continue;
      const message = text(followedRowText(workspace, row));
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
