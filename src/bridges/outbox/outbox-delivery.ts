/**
 * One call of the outbox (outbox.ts) handed to the adapter, and what its answer does to the rows:
 * confirmed, retried after a 429, failed, or (the chat moved or refuses us) the chat's other
 * waiting rows retargeted or failed with it.
 */
import { ChatUnreachableError, PhasebridgeError, RateLimitedError } from '../../errors.ts';
import { laneOf } from './limits.ts';
import type { Entry } from './outbox-entries.ts';
import type { OutboxOptions, OutboxTimers } from './outbox-options.ts';
import type { Pacer } from './pacer.ts';
import { clearRepeats, sendOrFind } from './resend.ts';
import type { Maybe } from './store-port.ts';

/** What delivering a call needs of its Outbox. */
export interface DeliveryContext {
  readonly options: OutboxOptions;
  readonly timers: OutboxTimers;
  readonly pacer: Pacer;
  readonly entries: Map<number, Entry>;
  stopped(): boolean;
  /** A store write in order; undefined when it is done already, else the promise of it. */
  write(op: () => Maybe<void>): Promise<void> | undefined;
  /** Pumps again at `at` (ms) at the latest. */
  wakeAt(at: number): void;
}

/**
 * Makes `entry`'s call (once its `attempted` mark is written) and records the answer; `answered`
 * tells the pacer the platform answered.
 */
export async function deliver(
  c: DeliveryContext,
  entry: Entry,
  answered: () => void,
  attempted: Promise<void> | undefined,
): Promise<void> {
  const { store, inner } = c.options;
  const id = entry.item.id;
  if (attempted && !(await marked(c, entry, attempted, answered))) return;
  let call: Promise<string | null>;
  if (entry.item.kind === 'send') call = sendOrFind(c.options, entry);
  else call = inner.edit(entry.target, entry.message).then(() => null);
  // The pacer counts the call from its answer, before our own bookkeeping is written.
  call = call.finally(answered);
  try {
    const ref = await call;
    const confirmed = c.write(() => store.confirmed(id, ref));
    if (confirmed) await confirmed;
    for (const a of entry.absorbed ?? []) {
      const absorbed = c.write(() => store.confirmed(a.id, null));
      if (absorbed) await absorbed;
    }
    c.entries.delete(id);
    for (const w of entry.waiters) w.resolve(ref);
    for (const m of [entry.message, ...(entry.absorbed ?? []).map((a) => a.message)]) {
      if (m.owner) c.options.onConfirmed?.(m.owner, m === entry.message ? ref : null);
    }
    if (entry.resent && ref !== null) await clearRepeats(c.options, entry, ref);
  } catch (err) {
    if (err instanceof RateLimitedError && !c.stopped()) {
      // The adapter waited as long as its policy allows; keep the row and try again later,
      // and the lane goes without its burst for a while (the platform wants it slower).
      const notBefore = c.timers.now() + err.retryAfterMs;
      c.pacer.rateLimited(entry.item.lane, c.timers.now());
      const retry = c.write(() => store.retryAt(id, notBefore));
      if (retry) await retry;
      entry.started = false;
      entry.item = { ...entry.item, notBefore };
      return;
    }
    const error =
      err instanceof PhasebridgeError
        ? err
        : new PhasebridgeError('PLATFORM', err instanceof Error ? err.message : String(err));
    const report = {
      id,
      platform: c.options.limits.platform,
      kind: entry.item.kind,
      target: entry.target,
      lane: entry.item.lane,
      message: entry.message,
      error,
      waited: entry.waiters.length > 0,
    };
    if (error instanceof ChatUnreachableError && error.movedTo && entry.item.kind === 'send') {
      // Same rows, same order, the chat's new id: nothing queued for it is lost or reordered.
      retarget(c, entry.item.lane, error.movedTo);
      c.options.log?.info({ id, to: error.movedTo }, 'outbox: chat moved, sends follow it');
      c.options.onFailure?.({ ...report, waited: false, moved: true });
      return;
    }
    const failed = c.write(() => store.failed(id, error.code, error.message));
    if (failed) await failed;
    for (const a of entry.absorbed ?? []) {
      const absorbed = c.write(() => store.failed(a.id, error.code, error.message));
      if (absorbed) await absorbed;
    }
    c.entries.delete(id);
    for (const w of entry.waiters) w.reject(err);
    c.options.log?.warn({ id, target: entry.target, code: error.code }, 'outbox: call failed');
    // The whole chat refuses us: what waits for it would only be refused again, one by one.
    if (error instanceof ChatUnreachableError && error.scope === 'chat' && !error.movedTo) {
      abandon(c, entry.item.lane, err);
    }
    c.options.onFailure?.({ ...report, moved: false });
  }
}

/**
 * Waits for the `attempted` mark; when it cannot be written the call is not made: the entry
 * waits and is tried again in a second (the row is still `pending` in bridge.db).
 */
async function marked(
  c: DeliveryContext,
  entry: Entry,
  attempted: Promise<void>,
  answered: () => void,
): Promise<boolean> {
  try {
    await attempted;
    return true;
  } catch (err) {
    answered();
    c.options.log?.error({ err, id: entry.item.id }, 'outbox: bridge.db write failed, retrying');
    entry.started = false;
    entry.item = { ...entry.item, notBefore: c.timers.now() + 1000 };
    c.wakeAt(entry.item.notBefore);
    return false;
  }
}

/** A write nobody waits for: a later failure is logged as a synchronous one would be. */
function logged(c: DeliveryContext, write: Promise<void> | undefined): void {
  write?.catch((err: unknown) => c.options.log?.error({ err }, 'outbox: bridge.db write failed'));
}

/** Waiting sends of `lane` (and the one just refused) go to the chat's new ref `to`. */
function retarget(c: DeliveryContext, lane: string, to: string): void {
  const { store } = c.options;
  const newLane = laneOf(to);
  for (const e of c.entries.values()) {
    // One call at a time per lane: the only started one is the send just refused.
    if (e.item.lane !== lane || e.item.kind !== 'send') continue;
    const target = to + e.target.slice(lane.length);
    logged(
      c,
      c.write(() => store.retarget(e.item.id, target, newLane)),
    );
    e.target = target;
    e.started = false;
    e.item = { ...e.item, lane: newLane };
  }
}

/** Fails the calls still waiting for `lane`, answering their callers with `err`. */
function abandon(c: DeliveryContext, lane: string, err: unknown): void {
  const { store } = c.options;
  for (const [id, e] of c.entries) {
    if (e.started || e.item.lane !== lane) continue;
    const code = err instanceof PhasebridgeError ? err.code : 'PLATFORM';
    const text = err instanceof Error ? err.message : String(err);
    for (const row of [id, ...(e.absorbed ?? []).map((a) => a.id)])
      logged(
        c,
        c.write(() => store.failed(row, code, text)),
      );
    c.entries.delete(id);
    for (const w of e.waiters) w.reject(err);
  }
}
