/**
 * The Slack app manifest `phasebridge setup slack` prints: scopes and events from the adapter's
 * scopes table, the slash command, interactivity, and, in HTTP mode, the request URLs under
 * `/slack/` (the adapter answers any path there and tells the payloads apart by their body).
 */
import { slackBotEvents, slackBotScopes } from '../../bridges/slack/scopes.ts';

/** What the manifest depends on. */
export interface SlackManifestOptions {
  /** App and bot name shown in Slack. */
  readonly name: string;
  /** The slash command, e.g. `/pb` (SLACK_COMMAND). */
  readonly command: string;
  /** HTTP mode: the bridge's public https URL (PHASEBRIDGE_PUBLIC_URL). Omitted: Socket Mode. */
  readonly publicUrl?: string;
}

/** Where Slack sends commands, events and interactions in HTTP mode. */
export function slackRequestUrl(publicUrl: string): string {
  const base = publicUrl.endsWith('/') ? publicUrl : `${publicUrl}/`;
  return new URL('slack/events', base).toString();
}

/** The manifest as a plain object (Slack's manifest schema). */
export function slackManifest(o: SlackManifestOptions): Record<string, unknown> {
  const url = o.publicUrl === undefined ? undefined : slackRequestUrl(o.publicUrl);
  const withUrl = (key: string) => (url === undefined ? {} : { [key]: url });
  return {
    display_information: {
      name: o.name,
      description: 'Drive coding-agent workflows from chat: runs, checkpoints, phase updates.',
    },
    features: {
      bot_user: { display_name: o.name, always_online: true },
      slash_commands: [
        {
          command: o.command,
          ...withUrl('url'),
          description: 'Run and steer coding-agent workflows',
          usage_hint: 'help',
          should_escape: false,
        },
      ],
    },
    oauth_config: { scopes: { bot: slackBotScopes() } },
    settings: {
      event_subscriptions: { ...withUrl('request_url'), bot_events: slackBotEvents() },
      interactivity: { is_enabled: true, ...withUrl('request_url') },
      org_deploy_enabled: false,
      socket_mode_enabled: url === undefined,
      token_rotation_enabled: false,
    },
  };
}
