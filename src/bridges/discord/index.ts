/**
 * Public entry of the Discord adapter. Only neutral types and this module's exports are used
 * outside `bridges/discord/`; discord.js types stay inside.
 */
export { DiscordChannel } from './channel.ts';
export {
  chatopsCommands,
  ROLE_CHOICES,
  type SlashCommandSpec,
  type SlashOptionKind,
  type SlashOptionSpec,
  validateCommands,
} from './commands.ts';
export { type DiscordChannelOptions, validateDiscordOptions } from './options.ts';
export {
  type DiscordPlace,
  DM_GUILD,
  formatChatRef,
  parseChatRef,
} from './refs.ts';
