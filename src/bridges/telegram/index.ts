/**
 * Public entry of the Telegram adapter. Only neutral types and this module's exports are used
 * outside `bridges/telegram/`; grammY types stay inside.
 */
export { TelegramChannel } from './channel.ts';
export {
  type TelegramChannelOptions,
  type TelegramCommandSpec,
  validateTelegramOptions,
} from './options.ts';
export { formatChatRef, parseChatRef, type TelegramChat } from './outbound.ts';
