/**
 * A send the previous process handed to the platform without its answer being recorded (a kill
 * in the call: the row is found `attempted`) may have been made already (issue 39). Where the
 * platform can be asked (Slack: the nonce in the message's metadata) it is looked up instead of
 * made again; where it cannot (Telegram), it is made again and the earlier copy loses its
 * buttons, so only the copy the bridge knows and edits offers them.
 */
import type { Entry } from './outbox-entries.ts';
import type { OutboxOptions } from './outbox-options.ts';
import type { OutboxRow } from './store-port.ts';

/** A send the previous process handed over, its answer never recorded: a copy may exist. */
export function resent(row: OutboxRow): boolean {
  return row.kind === 'send' && row.state === 'attempted';
}

/** Makes `entry`'s send, or finds the message a previous process made for it (`resent`). */
export async function sendOrFind(o: OutboxOptions, entry: Entry): Promise<string | null> {
  const { inner, log } = o;
  if (entry.resent && inner.findSent) {
    const found = await inner.findSent(entry.target, entry.message).catch((err: unknown) => {
      log?.warn({ err, id: entry.item.id }, 'outbox: could not look for an earlier copy');
      return undefined;
    });
    if (found !== undefined) {
      log?.info({ id: entry.item.id, ref: found }, 'outbox: the send was made before the restart');
      entry.resent = false;
      return found;
    }
  }
  return inner.send(entry.target, entry.message);
}

/**
 * After a resend with buttons confirmed as `ref`, on a platform that cannot be asked: the
 * adapter takes the buttons off the earlier copy (`Channel.clearRepeats`, given every message
 * bridge.db knows in the chat), and the send's owner is told of the copies found.
 */
export async function clearRepeats(o: OutboxOptions, entry: Entry, ref: string): Promise<void> {
  const { inner, store, log } = o;
  const message = entry.message;
  if (!inner.clearRepeats || (message.buttons ?? []).length === 0) return;
  try {
    const known = await store.knownRefs(o.limits.platform, entry.item.lane);
    const repeats = await inner.clearRepeats(ref, message, known);
    if (repeats.length === 0) return;
    log?.info({ id: entry.item.id, repeats }, 'outbox: repeats of a resent message closed');
    if (message.owner) o.onRepeats?.(message.owner, repeats);
  } catch (err) {
    log?.warn({ err, id: entry.item.id }, 'outbox: could not close the repeats of a resend');
  }
}
