/**
 * What the Discord bot must be granted, in one place: the invite's OAuth2 scopes, the channel
 * permissions the adapter uses (named, with why) and the gateway intents it asks for.
 * `phasebridge setup discord` and `doctor` read them; a test checks the bits against discord.js.
 */

/** One channel permission the bot needs, with its bit (Discord's numbering). */
export interface DiscordPermission {
  readonly name: string;
  readonly bit: bigint;
  readonly why: string;
  /** What stops working without it, for `doctor`. */
  readonly without: string;
}

/** Every permission the adapter uses: it posts, edits and deletes only its own messages. */
export const DISCORD_PERMISSIONS: readonly DiscordPermission[] = [
  {
    name: 'ViewChannel',
    bit: 1n << 10n,
    why: 'see the channels it is bound to',
    without: 'the bot sees no channel: nothing works',
  },
  {
    name: 'SendMessages',
    bit: 1n << 11n,
    why: 'post run status and checkpoints',
    without: 'no status message or checkpoint is posted',
  },
  {
    name: 'EmbedLinks',
    bit: 1n << 14n,
    why: 'messages are embeds (with buttons)',
    without: 'status and checkpoint messages are refused (they are embeds)',
  },
  {
    name: 'AttachFiles',
    bit: 1n << 15n,
    why: 'upload logs and reports',
    without: 'logs and files an agent sends are not uploaded',
  },
  {
    name: 'CreatePublicThreads',
    bit: 1n << 35n,
    why: 'answer a run message in a thread opened on it',
    without: 'replies open no thread and go in the channel instead',
  },
  {
    name: 'SendMessagesInThreads',
    bit: 1n << 38n,
    why: 'post in a thread bound as its own chat',
    without: 'nothing is posted in threads (thread replies and thread-bound chats)',
  },
];

/** Discord's Administrator bit: it grants every permission. */
const ADMINISTRATOR = 1n << 3n;

/** The permissions of DISCORD_PERMISSIONS that `granted` (a permission integer) lacks. */
export function missingDiscordPermissions(granted: bigint): DiscordPermission[] {
  if ((granted & ADMINISTRATOR) !== 0n) return [];
  return DISCORD_PERMISSIONS.filter((p) => (granted & p.bit) === 0n);
}

/** The invite's OAuth2 scopes: the bot user, and its slash commands. */
export const DISCORD_SCOPES = ['bot', 'applications.commands'] as const;

/**
 * Gateway intents the client always asks for, neither privileged: Guilds (channels, threads) and
 * GuildMessages (MESSAGE_CREATE: replies and thread messages as guidance).
 */
export const DISCORD_INTENTS = [
  { name: 'Guilds', bit: 1 << 0 },
  { name: 'GuildMessages', bit: 1 << 9 },
  // A person's DM to the bot (an unbound DM is answered with how to pair).
  { name: 'DirectMessages', bit: 1 << 12 },
] as const;

/**
 * The privileged intent without which Discord blanks a message's text: asked for only when the
 * application has it enabled (asking otherwise closes the gateway with 4014), else guidance
 * replies are not seen and `doctor` and the start log say so.
 */
export const MESSAGE_CONTENT_INTENT = { name: 'MessageContent', bit: 1 << 15 } as const;

/** Application flags of the privileged intents (Message Content is the one the bridge uses). */
export const PRIVILEGED_INTENT_FLAGS = [
  { name: 'Presence', flags: (1 << 12) | (1 << 13) },
  { name: 'Server Members', flags: (1 << 14) | (1 << 15) },
  { name: 'Message Content', flags: (1 << 18) | (1 << 19) },
] as const;

/** Whether the application's flags (`GET /applications/@me`) enable the Message Content intent. */
export function messageContentEnabled(applicationFlags: number): boolean {
  return (applicationFlags & ((1 << 18) | (1 << 19))) !== 0;
}

/** What to do when the Message Content intent is off, for `doctor` and the start log. */
export const MESSAGE_CONTENT_FIX =
  'Developer Portal → your application → Bot → Privileged Gateway Intents → Message Content on, then restart phasebridge serve';

/** The permission integer of the invite URL. */
export function discordPermissionInteger(): string {
  return DISCORD_PERMISSIONS.reduce((sum, p) => sum | p.bit, 0n).toString();
}

/** The invite URL that adds the bot to a server with exactly these scopes and permissions. */
export function discordInviteUrl(applicationId: string): string {
  const q = new URLSearchParams({
    client_id: applicationId,
    scope: DISCORD_SCOPES.join(' '),
    permissions: discordPermissionInteger(),
  });
  return `https://discord.com/oauth2/authorize?${q.toString().replace(/\+/g, '%20')}`;
}
