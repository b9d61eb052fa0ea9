/**
 * The outbox's calls in memory (outbox.ts): a row's pacing item, message and waiting callers, and
 * the absorption of superseded waiting edits (several edits of one message waiting at once go
 * out as one call, the newest).
 */
import { StoppingError } from '../../errors.ts';
import type { OutgoingMessage, Urgency } from '../messages.ts';
import { type OutboxKind, URGENCY_RANK } from './limits.ts';
import type { PaceItem } from './pacer.ts';

/** A caller waiting for a call's result. */
export interface Waiter {
  resolve(ref: string | null): void;
  reject(err: unknown): void;
}

/** One queued or running call. */
export interface Entry {
  item: PaceItem;
  target: string;
  message: OutgoingMessage;
  waiters: Waiter[];
  started: boolean;
  /**
   * A send the previous process handed over without its answer being recorded (found
   * `attempted`): the platform may hold a copy of it already (resend.ts, `sendOrFind`).
   */
  resent?: boolean;
  /** Older waiting edits of the same message this one carries (confirmed or failed with it). */
  absorbed?: { id: number; message: OutgoingMessage }[];
}

/** The pacer's view of a row. */
export function item(
  id: number,
  lane: string,
  kind: OutboxKind,
  urgency: Urgency,
  notBefore: number,
  message: OutgoingMessage,
  order = 0,
): PaceItem {
  return { id, lane, kind, urgency, order, notBefore, closes: closes(message) };
}

/**
 * `it` taking over content of `urgency` queued at position `order`: as urgent as the more urgent
 * of the two, and, when that raised it, in the place of the content that raised it (a progress
 * edit that became a run's final state waits among the notices from the notice's place).
 */
export function raised(it: PaceItem, urgency: Urgency, order: number): PaceItem {
  if (URGENCY_RANK[urgency] >= URGENCY_RANK[it.urgency]) return it;
  return { ...it, urgency, order };
}

/** Whether the call shows a closed checkpoint's decision (its owner is the copy's `decision`). */
export function closes(message: OutgoingMessage): boolean {
  return message.owner?.kind === 'decision';
}

/** The more urgent of two urgencies (a coalesced edit keeps the higher one). */
export function moreUrgent(a: Urgency, b: Urgency): Urgency {
  return URGENCY_RANK[a] <= URGENCY_RANK[b] ? a : b;
}

/**
 * Waiting edits of one message beyond the newest (rows a restart found, or a retried edit a
 * newer one queued behind) are absorbed by the newest: one call with the latest content, at the
 * most urgent of their urgencies, their callers answered and their rows confirmed with it.
 */
export function absorbSuperseded(entries: Map<number, Entry>): void {
  const newest = new Map<string, Entry>();
  for (const e of entries.values()) {
    if (e.started || e.item.kind !== 'edit') continue;
    const seen = newest.get(e.target);
    if (!seen || e.item.id > seen.item.id) newest.set(e.target, e);
  }
  for (const [id, e] of entries) {
    const top = newest.get(e.target);
    if (e.started || e.item.kind !== 'edit' || !top || top === e) continue;
    entries.delete(id);
    const [a, b] = [top.item, e.item];
    const rank = (x: PaceItem) => URGENCY_RANK[x.urgency];
    // The absorbed edit's urgency and its place at that urgency carry over with its content.
    const order =
      rank(a) === rank(b)
        ? Math.min(a.order ?? 0, b.order ?? 0)
        : rank(b) < rank(a)
          ? b.order
          : a.order;
    top.item = {
      ...top.item,
      urgency: moreUrgent(a.urgency, b.urgency),
      order: order ?? 0,
      closes: top.item.closes || e.item.closes,
      notBefore: Math.max(top.item.notBefore, e.item.notBefore),
    };
    top.waiters.push(...e.waiters);
    top.absorbed = [...(top.absorbed ?? []), { id, message: e.message }, ...(e.absorbed ?? [])];
  }
}

/** The answer to a caller whose call stays queued for the next process. */
export function deferred(): StoppingError {
  return new StoppingError();
}
