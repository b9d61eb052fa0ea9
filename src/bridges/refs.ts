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

const PART = /^-?[A-Za-z0-9_.-]+$/;
const SNOWFLAKE = /^[0-9]{1,25}$/;

/**
 * The shape of each part of a chat ref, per platform: the chat's parts, then the thread's. Ids are
 * the platforms' own (Telegram integers, Slack T…/C… ids and message ts, Discord snowflakes), so
 * a name or a typo is refused here instead of becoming a binding nothing ever matches.
 */
const CHAT_SHAPES: Record<Platform, { chat: readonly RegExp[]; thread?: RegExp }> = {
  telegram: { chat: [/^-?[0-9]{1,20}$/], thread: /^[0-9]{1,20}$/ },
  slack: { chat: [/^[TE][A-Z0-9]+$/, /^[CGD][A-Z0-9]+$/], thread: /^[0-9]+\.[0-9]+$/ },
  // Discord DMs have no guild: their refs read `discord:@me:<channel>`.
  discord: { chat: [/^(@me|[0-9]{1,25})$/, SNOWFLAKE], thread: SNOWFLAKE },
  web: { chat: [PART] },
};

/** The shape of a user id per platform (the immutable id, never a name). */
const USER_SHAPES: Record<Platform, RegExp> = {
  telegram: /^[0-9]{1,20}$/,
  slack: /^[UWB][A-Z0-9]+$/,
  discord: SNOWFLAKE,
  web: PART,
};

/** Parses `telegram:<chat>[:<topic>]`, `slack:<team>:<channel>[:<thread>]`, `discord:<guild>:<channel>[:<thread>]`, `web:<session>`. */
export function parseChatRef(text: string): ChatRef {
  const [platform, ...parts] = text.split(':');
  if (!isPlatform(platform)) {
    throw new InvalidInputError(
      `chat ref "${text}" must start with one of ${PLATFORMS.join(', ')} (e.g. telegram:-1001234567)`,
    );
  }
  const shape = CHAT_SHAPES[platform];
  const n = shape.chat.length;
  const maxParts = shape.thread ? n + 1 : n;
  const valid = (p: string, i: number) => (shape.chat[i] ?? shape.thread)!.test(p);
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
  if (i < 0 || !isPlatform(platform)) {
    throw new InvalidInputError(
      `user "${text}" must be <platform>:<user id> with platform one of ${PLATFORMS.join(', ')} (e.g. telegram:123456)`,
    );
  }
  if (!USER_SHAPES[platform].test(id)) {
    throw new InvalidInputError(
      `user "${text}" is not valid; expected ${USER_EXAMPLES[platform]} (the immutable id, not a name)`,
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

const USER_EXAMPLES: Record<Platform, string> = {
  telegram: 'telegram:<numeric user id>, e.g. telegram:123456',
  slack: 'slack:<member id>, e.g. slack:U012ABCDE',
  discord: 'discord:<numeric user id>, e.g. discord:80351110224678912',
  web: 'web:<id>',
};

function isPlatform(p: string | undefined): p is Platform {
  return (PLATFORMS as readonly string[]).includes(p ?? '');
}
