/**
 * Public entry of the Slack adapter. Only neutral types and this module's exports are used
 * outside `bridges/slack/`; Bolt and Web API types stay inside.
 */

export type { RetryPolicy } from '../delivery.ts';
export { SlackChannel } from './channel.ts';
export {
  DEFAULT_COMMAND,
  type SlackChannelOptions,
  validateSlackOptions,
  type WebClientRetries,
} from './options.ts';
export { formatChatRef, parseChatRef, type SlackChat } from './outbound.ts';
export { slackSignature, verifySlackRequest } from './verify.ts';
