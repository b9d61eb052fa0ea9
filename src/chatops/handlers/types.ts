/** What every command handler gets and returns, and lookups several handlers share. */

import { resolve } from 'node:path';
import type { Command } from '../../bridges/events.ts';
import type { OutgoingMessage } from '../../bridges/messages.ts';
import { prose } from '../../bridges/render-text.ts';
import type { BindingRecord, RunIndexRecord } from '../../db/repositories/index.ts';
import type { AuditOutcome } from '../../db/schema.ts';
import { NotFoundError } from '../../errors.ts';
import type { Access, ChatOpsDeps } from '../context.ts';
import type { SessionOffers } from '../session-offers.ts';

/** The context of one command: who sent it where, and what they may do there. */
export interface CommandContext {
  readonly deps: ChatOpsDeps;
  readonly event: Command;
  readonly access: Access;
  /** Makes a chat follow a run (its status message and checkpoints come there). */
  readonly follow: (runId: string, chat: string) => void;
  /** Offers interrupted sessions with Resume / Restart / Abort (absent: the verb says so). */
  readonly sessions?: SessionOffers;
}

/** What a handler did: the answer for the chat and the audit entry. */
export interface HandlerResult {
  readonly reply?: string | OutgoingMessage;
  readonly outcome: AuditOutcome;
  readonly target?: string;
  readonly detail?: string;
}

/** The chat's binding; the router only calls bound-chat handlers in a bound chat. */
export function bindingOf(ctx: CommandContext): BindingRecord {
  const b = ctx.access.binding;
  if (b === null) throw new NotFoundError('this chat is not bound to a workspace');
  return b;
}

/**
 * The index record of a run this chat may see: one of its workspace or started from it. Any
 * other run is "not found", so a chat learns nothing about runs outside its workspace.
 */
export async function visibleRun(ctx: CommandContext, runId: string): Promise<RunIndexRecord> {
  const binding = bindingOf(ctx);
  const run = await ctx.deps.repos.runs.get(runId);
  const visible =
    run !== null &&
    (resolve(run.workspace) === resolve(binding.workspace) || run.originChat === ctx.event.chatRef);
  if (!visible) throw new NotFoundError(`no run ${runId} here`);
  return run;
}

/** Runs this chat may see (its workspace's and those started from it), newest first. */
export async function visibleRuns(
  ctx: CommandContext,
  filter: { status?: string; limit?: number } = {},
): Promise<RunIndexRecord[]> {
  const binding = bindingOf(ctx);
  const { orchestrator } = ctx.deps;
  const [byWorkspace, byChat] = await Promise.all([
    orchestrator.listRuns({ ...filter, workspace: binding.workspace }),
    orchestrator.listRuns({ ...filter, originChat: ctx.event.chatRef }),
  ]);
  const seen = new Map<string, RunIndexRecord>();
  for (const r of [...byWorkspace, ...byChat]) seen.set(r.id, r);
  const all = [...seen.values()].sort((a, b) => b.updatedAt - a.updatedAt);
  return filter.limit === undefined ? all : all.slice(0, filter.limit);
}

/** A reply from prose; `…` spans become code, rendered in each platform's own markup. */
export function text(reply: string): OutgoingMessage {
  return { text: prose(reply) };
}

/** A committed command's warnings (a projection that failed), one line each after the reply. */
export function warningLines(warnings: readonly string[] | undefined): string {
  return (warnings ?? []).map((w) => `\nWarning: ${w}`).join('');
}
