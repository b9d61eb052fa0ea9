/**
 * What an unbound chat hears when it writes something the bridge cannot act on: an unknown
 * command gets the nearest verb ("did you mean") and how to pair; plain text in a private chat
 * gets what the bot is and how to pair. At most one such hint per chat per
 * UNBOUND_HINT_INTERVAL_MS, so nobody can make the bot answer every message of an unbound chat.
 */
import type { Platform } from '../bridges/refs.ts';
import { likelyVerb } from './grammar.ts';

/** One hint per unbound chat per this long (60 s); the rest of the chat's messages stay unanswered. */
export const UNBOUND_HINT_INTERVAL_MS = 60_000;
/** Chats remembered at once; the oldest are forgotten first (a hint too many, never a leak). */
const MAX_CHATS = 10_000;

/** How a verb is typed on each platform (Slack: the app's slash command, `/pb` by default). */
export function commandHow(platform: Platform, words: string): string {
  if (platform === 'slack') return `/pb ${words}`;
  return platform === 'web' ? words : `/${words}`;
}

/** How an admin pairs a chat, in words. */
export function pairingHint(platform: Platform): string {
  return `An admin can pair it: send ${commandHow(platform, 'pair CODE')} (the code \`phasebridge serve\` prints).`;
}

/** The answer to an unknown command in an unbound chat. */
export function unknownInUnboundText(name: string, platform: Platform): string {
  const near = likelyVerb(name);
  const mean = near === undefined ? '' : ` Did you mean ${commandHow(platform, near)}?`;
  return [
    `Unknown command "${name.slice(0, 40)}".${mean}`,
    `This chat is not bound. ${pairingHint(platform)}`,
    `Until then ${commandHow(platform, 'help')} and ${commandHow(platform, 'whoami')} work here.`,
  ].join('\n');
}

/** The answer to plain text in an unbound private chat: what the bot is and how to pair. */
export function introText(platform: Platform): string {
  return [
    'I am phasebridge: I run coding-agent workflows for the chats bound to a workspace, and post their steps and checkpoints there to approve.',
    `This chat is not bound. ${pairingHint(platform)}`,
    `${commandHow(platform, 'help')} lists the commands.`,
  ].join('\n');
}

/** Remembers when each unbound chat last got a hint. */
export class UnboundHints {
  readonly #last = new Map<string, number>();
  readonly #intervalMs: number;

  constructor(intervalMs: number = UNBOUND_HINT_INTERVAL_MS) {
    this.#intervalMs = intervalMs;
  }

  /** True (and remembered) when `chat` may get a hint now. */
  allow(chat: string, now: number = Date.now()): boolean {
    const last = this.#last.get(chat);
    if (last !== undefined && now - last < this.#intervalMs) return false;
    this.#last.delete(chat);
    this.#last.set(chat, now);
    if (this.#last.size > MAX_CHATS) this.#last.delete(this.#last.keys().next().value!);
    return true;
  }
}
