/**
 * Finding a message the bridge posted before a restart (issue 39). Every post carries the send's
 * nonce in Slack's message metadata (`event_type` phasebridge_send); a send the previous process
 * handed to Slack without recording the answer is looked up in the conversation (or the thread)
 * by that nonce before it is made again, so a kill in the send window leaves no second copy.
 */
import type { App } from '@slack/bolt';
import type { SlackChat } from './outbound.ts';

/** The metadata event type of the bridge's posts. */
export const SEND_EVENT = 'phasebridge_send';

/** How many of a conversation's latest messages are searched (one call, Tier 3). */
const LOOKUP_LIMIT = 100;

/** chat.postMessage's `metadata` for a send with `nonce` (nothing without one). */
export function sendMetadata(nonce: string | undefined) {
  if (nonce === undefined) return {};
  return { metadata: { event_type: SEND_EVENT, event_payload: { nonce } } };
}

/** How a lookup makes its one Web API call (the channel's retries and error translation). */
export type SlackCall = <T>(method: string, run: () => Promise<T>) => Promise<T>;

/**
 * The ts of the bridge's messages in `chat` (its thread, if any) posted with `nonce`, oldest
 * first: among the latest LOOKUP_LIMIT top-level messages (conversations.history), or in the
 * thread (conversations.replies; a thread's messages are not in the channel's history).
 */
export async function postedWith(
  client: App['client'],
  call: SlackCall,
  chat: SlackChat,
  nonce: string,
): Promise<string[]> {
  const common = { channel: chat.channel, include_all_metadata: true, limit: LOOKUP_LIMIT };
  const answer =
    chat.thread === undefined
      ? await call('conversations.history', () => client.conversations.history(common))
      : await call('conversations.replies', () =>
          client.conversations.replies({ ...common, ts: chat.thread! }),
        );
  const ts: string[] = [];
  for (const m of answer.messages ?? []) {
    const meta = m.metadata as
      | { event_type?: string; event_payload?: { nonce?: unknown } }
      | undefined;
    if (meta?.event_type === SEND_EVENT && meta.event_payload?.nonce === nonce && m.ts)
      ts.push(m.ts);
  }
  return ts.sort((a, b) => Number(a) - Number(b));
}
