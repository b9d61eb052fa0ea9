import { InvalidInputError } from '../errors.ts';

/** The chat platforms phasebridge speaks to. */
export const PLATFORMS = ['telegram', 'slack', 'discord', 'web'] as const;

/** One of PLATFORMS. */
export type Platform = (typeof PLATFORMS)[number];

/** A parsed chat ref: `chat` is the whole ref without its thread part. */
export interface ChatRef {
  platform: Platform;
  chat: string;
  thread?: string;
}

/** A platform user: the immutable platform id, never a display name. */
export interface UserRef {
  platform: Platform;
  id: string;
}

// How many ':'-separated parts name the chat (before an optional thread) per platform.
const CHAT_PARTS: Record<Platform, number> = { telegram: 1, slack: 2, discord: 2, web: 1 };
const PART = /^-?[A-Za-z0-9_.-]+$/;

/** Parses `telegram:<chat>[:<topic>]`, `slack:<team>:<channel>[:<thread>]`, `discord:<guild>:<channel>[:<thread>]`, `web:<session>`. */
export function parseChatRef(text: string): ChatRef {
  const [platform, ...parts] = text.split(':');
  if (!isPlatform(platform)) {
    throw new InvalidInputError(
      `chat ref "${text}" must start with one of ${PLATFORMS.join(', ')} (e.g. telegram:-1001234567)`,
    );
  }
  const n = CHAT_PARTS[platform];
  const maxParts = platform === 'web' ? 1 : n + 1;
  // Discord DMs have no guild: their refs read `discord:@me:<channel>`.
  const valid = (p: string, i: number) =>
    PART.test(p) || (platform === 'discord' && i === 0 && p === '@me');
  if (parts.length < n || parts.length > maxParts || !parts.every(valid)) {
    throw new InvalidInputError(
      `chat ref "${text}" is not valid; expected ${CHAT_EXAMPLES[platform]}`,
    );
  }
  const chat = [platform, ...parts.slice(0, n)].join(':');
  const thread = parts[n];
  return thread === undefined ? { platform, chat } : { platform, chat, thread };
}

/** Formats a chat ref back to its string form. */
export function formatChatRef(ref: ChatRef): string {
  return ref.thread ? `${ref.chat}:${ref.thread}` : ref.chat;
}

/** Parses `platform:userId`, e.g. `telegram:123456` or `slack:U012ABC`. */
export function parseUserRef(text: string): UserRef {
  const i = text.indexOf(':');
  const platform = text.slice(0, i);
  const id = text.slice(i + 1);
  if (i < 0 || !isPlatform(platform) || !PART.test(id)) {
    throw new InvalidInputError(
      `user "${text}" must be <platform>:<user id> with platform one of ${PLATFORMS.join(', ')} (e.g. telegram:123456)`,
    );
  }
  return { platform, id };
}

const CHAT_EXAMPLES: Record<Platform, string> = {
  telegram: 'telegram:<chat id>[:<topic id>]',
  slack: 'slack:<team id>:<channel id>[:<thread ts>]',
  discord: 'discord:<guild id>:<channel id>[:<thread id>]',
  web: 'web:<session>',
};

function isPlatform(p: string | undefined): p is Platform {
  return (PLATFORMS as readonly string[]).includes(p ?? '');
}
