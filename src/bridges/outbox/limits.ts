/**
 * The platforms' rate limits, one table per platform, as the outbox scheduler applies them
 * (docs/outbox.md shows the same tables). A limit is "at most `max` calls in any `windowMs`" over
 * one scope: the whole bot, one chat, one group chat, or one Slack workspace for a method.
 * `reserve` slots of a limit are kept for urgent calls: a status edit may not take them, so a
 * checkpoint, a decision or a run's final state is never queued behind progress edits. A
 * `burst` lets the call a person waits for (`interactive`) go at once where the platform allows
 * short bursts over its rate (docs/outbox.md, "Interactive latency").
 */
import type { Urgency } from '../messages.ts';
import { parseChatRef } from '../refs.ts';

export type { Urgency } from '../messages.ts';

/**
 * Rank of an urgency: lower goes first (what a person waits for, a checkpoint/decision, a
 * notice, then a status edit).
 */
export const URGENCY_RANK: Readonly<Record<Urgency, number>> = {
  interactive: 0,
  decision: 1,
  notice: 2,
  status: 3,
};

/** The kinds of outgoing calls the outbox holds. */
export type OutboxKind = 'send' | 'edit';

/** Which calls a limit counts. */
export type LimitScope = 'bot' | 'chat' | 'group' | 'workspace';

/** One row of a platform's table. */
export interface RateLimit {
  readonly scope: LimitScope;
  /** Calls of these kinds count (both when absent). */
  readonly kinds?: readonly OutboxKind[];
  readonly max: number;
  readonly windowMs: number;
  /** Slots status edits may not take (kept for urgent calls). */
  readonly reserve: number;
  /**
   * Slots only interactive calls may take (at most `reserve`): a fan-out filling the scope at
   * once (30 chats' status messages) does not make a person's press wait for the next window.
   * No table holds any since issue 31: held slots cost a fan-out that many of every window, and
   * `spread` bounds a press's wait instead.
   */
  readonly held?: number;
  /**
   * Calls over `max` the platform tolerates in a short burst. The scope is then also a token
   * bucket of `max + burst` calls refilled at `max` per `windowMs`, which every call needs a
   * token of; only an interactive call may go without the `max`-per-window spacing, so the
   * sustained rate stays `max` per window and other calls are paced as without a burst.
   */
  readonly burst?: number;
  /**
   * While an interactive call was answered within `whileMs`, at most `atOnce` other calls start
   * at once; past them, one every `windowMs / max`. A full window then frees its slots a few at
   * a time, so a person's next call (interactive calls are exempt, and go first) waits for about
   * `atOnce` slots at most, where a window filled at once would make it wait for all of it.
   */
  readonly spread?: { readonly atOnce: number; readonly whileMs: number };
  /**
   * Status edits of the scope also need a token of a bucket of this many, refilled at `max -
   * reserve` per window: progress edits come evenly over the window at the rate they may use,
   * not all at its start, so a run's end or a checkpoint seldom finds its chat's second just
   * taken by one (docs/outbox.md, "Fan-out to 30 groups").
   */
  readonly statusBurst?: number;
  /** Where the figure comes from. */
  readonly source: string;
}

/** A platform's table. */
export interface PlatformLimits {
  readonly platform: string;
  readonly limits: readonly RateLimit[];
}

/**
 * Telegram Bot API FAQ ("My bot is hitting limits"): about 1 message per second in one chat, at
 * most 20 messages per minute in one group, about 30 messages per second overall. Edits count as
 * messages here: Telegram answers 429 to fast edits just the same. The FAQ also says "we may
 * allow short bursts that go over this limit": 2 calls over the 1/s, for interactive calls only.
 */
export const TELEGRAM_LIMITS: PlatformLimits = {
  platform: 'telegram',
  limits: [
    {
      scope: 'bot',
      max: 30,
      windowMs: 1000,
      reserve: 5,
      // A press waits for about 11 slots (~370 ms) at most, where a window filled at once made it
      // wait up to a second; the fan-out's end comes ~1% later (docs/outbox.md, issue 31).
      spread: { atOnce: 10, whileMs: 30_000 },
      source: 'FAQ: 30 messages/s overall',
    },
    {
      scope: 'chat',
      max: 1,
      windowMs: 1000,
      reserve: 0,
      burst: 2,
      source: 'FAQ: 1 message/s per chat, short bursts allowed',
    },
    {
      scope: 'group',
      max: 20,
      windowMs: 60_000,
      reserve: 10,
      statusBurst: 3,
      source: 'FAQ: 20 messages/min per group',
    },
  ],
};

/**
 * Slack Web API: chat.postMessage "1 message per second per channel, short bursts >1 allowed"
 * (special tier: 2 over it, for interactive calls only); chat.update and chat.delete are Tier 3
 * (50+ per minute per workspace, "sporadic bursts are welcome").
 */
export const SLACK_LIMITS: PlatformLimits = {
  platform: 'slack',
  limits: [
    {
      scope: 'chat',
      kinds: ['send'],
      max: 1,
      windowMs: 1000,
      reserve: 0,
      burst: 2,
      source: 'chat.postMessage: 1/s per channel, short bursts allowed',
    },
    {
      scope: 'workspace',
      kinds: ['edit'],
      max: 50,
      windowMs: 60_000,
      reserve: 10,
      source: 'chat.update: Tier 3, 50/min per workspace',
    },
  ],
};

/**
 * Discord: none here on purpose. discord.js's REST client reads the X-RateLimit-* headers and
 * queues every call per bucket (5 per 5 s per channel, the global 50/s); pacing again here would
 * only guess at what it already knows. The outbox still keeps order, urgency and coalescing.
 */
export const DISCORD_LIMITS: PlatformLimits = { platform: 'discord', limits: [] };

/** The table of a platform (none for the web console: it has no limits). */
export function limitsOf(platform: string): PlatformLimits {
  if (platform === 'telegram') return TELEGRAM_LIMITS;
  if (platform === 'slack') return SLACK_LIMITS;
  if (platform === 'discord') return DISCORD_LIMITS;
  return { platform, limits: [] };
}

/** One limit as it applies to one call: the bucket it counts in. */
export interface BucketUse {
  readonly key: string;
  readonly limit: RateLimit;
}

/** The lane of a chat or message ref: the chat without its thread (limits are per chat). */
export function laneOf(ref: string): string {
  const slash = ref.indexOf('/');
  return parseChatRef(slash < 0 ? ref : ref.slice(0, slash)).chat;
}

/** True for a Telegram group or supergroup (negative chat id), where the per-group limit applies. */
function isTelegramGroup(lane: string): boolean {
  return lane.startsWith('telegram:-');
}

/** The buckets a call of `kind` in `lane` counts in, by the platform's table. */
export function bucketsFor(table: PlatformLimits, lane: string, kind: OutboxKind): BucketUse[] {
  const uses: BucketUse[] = [];
  for (const limit of table.limits) {
    if (limit.kinds && !limit.kinds.includes(kind)) continue;
    const i = table.limits.indexOf(limit);
    switch (limit.scope) {
      case 'bot':
        uses.push({ key: `${i}:bot`, limit });
        break;
      case 'chat':
        uses.push({ key: `${i}:${lane}`, limit });
        break;
      case 'group':
        if (isTelegramGroup(lane)) uses.push({ key: `${i}:${lane}`, limit });
        break;
      case 'workspace':
        // slack:<team>:<channel>: the team is the workspace.
        uses.push({ key: `${i}:${lane.split(':').slice(0, 2).join(':')}`, limit });
        break;
    }
  }
  return uses;
}
