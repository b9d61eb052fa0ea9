/**
 * The step-by-step text of `phasebridge setup <platform>`; docs/telegram.md, docs/slack.md and
 * docs/discord.md say the same at more length. Pure: values in, lines out.
 */
import {
  DISCORD_INTENTS,
  DISCORD_PERMISSIONS,
  DISCORD_SCOPES,
  discordInviteUrl,
  discordPermissionInteger,
} from '../../bridges/discord/permissions.ts';
import { SLACK_SCOPES } from '../../bridges/slack/scopes.ts';
import { slackRequestUrl } from './slack-manifest.ts';

/** Telegram: BotFather, privacy mode in groups, polling or webhook. */
export function telegramGuide(o: { webhookUrl?: string | undefined }): string[] {
  const updates = o.webhookUrl
    ? [
        `4. Updates by webhook: Telegram POSTs to ${o.webhookUrl}; the bridge serves that URL's path`,
        `   (${new URL(o.webhookUrl).pathname}) and registers it when \`serve\` starts. Your https proxy must`,
        '   forward that path to PHASEBRIDGE_PORT. Set TELEGRAM_WEBHOOK_SECRET (openssl rand -hex 32).',
      ]
    : [
        '4. Updates by long polling (the default): nothing to open to the internet. Only one process',
        '   may poll a token: a second bridge on it stops the first (reported in the log and /readyz).',
        '   For a webhook instead, set TELEGRAM_WEBHOOK_URL (https) and TELEGRAM_WEBHOOK_SECRET.',
      ];
  return [
    'Telegram',
    '1. In Telegram, open @BotFather, send /newbot, pick a name and a username ending in "bot".',
    '2. Copy the token it gives you: export TELEGRAM_BOT_TOKEN=<token> (env only, never a file).',
    '3. Groups: privacy mode stays on (the default). The bot then sees /commands and replies to',
    '   its own messages, which is all phasebridge reads. Add the bot to the group; in groups',
    '   commands need the slash: /pair CODE, /run … (/run@<bot> … when the group has other bots).',
    '   In a group with topics, each topic is paired on its own (docs/telegram.md).',
    ...updates,
    '5. Run `phasebridge serve`: it prints a pairing code and a one-tap link',
    '   https://t.me/<bot>?start=<code> that pairs your private chat with the bot.',
  ];
}

/**
 * Slack, in the order that works. HTTP mode: Slack checks the request URL as soon as the app
 * exists, before it is installed, so `serve` runs first with only the signing secret (it answers
 * that check) and the bot token comes after the install.
 */
export function slackGuide(o: {
  publicUrl?: string | undefined;
  command: string;
  manifestFile?: string | undefined;
}): string[] {
  const from = o.manifestFile ? `the manifest in ${o.manifestFile}` : 'the manifest below';
  const scopes = [
    '   Bot scopes, and why:',
    ...SLACK_SCOPES.map((s) => `     ${s.scope}: ${s.why}`),
  ];
  const pair = (n: number) => [
    `${n}. In a channel, /invite the bot, then: ${o.command} pair CODE (the code \`serve\` prints).`,
    '   `phasebridge doctor` checks the token and its scopes.',
  ];
  if (o.publicUrl) {
    const url = slackRequestUrl(o.publicUrl);
    return [
      'Slack (HTTP mode)',
      `1. https://api.slack.com/apps → Create New App → From a manifest → paste ${from}.`,
      `   Slack sends commands, events and button presses to ${url}; it may say the URL is not`,
      '   verified yet: expected, step 3 fixes it.',
      ...scopes,
      '2. Basic Information → App Credentials → Signing Secret: export SLACK_SIGNING_SECRET=<secret>.',
      '3. Start `phasebridge serve` with only that secret set (your https proxy forwarding /slack/',
      "   to PHASEBRIDGE_PORT): it answers Slack's URL check before any token exists. Then in the",
      '   app: Event Subscriptions → Retry (shows Verified) → Save; Interactivity & Shortcuts → Save.',
      '4. Install to Workspace, then OAuth & Permissions → Bot User OAuth Token:',
      '   export SLACK_BOT_TOKEN=<xoxb-…>, and restart `phasebridge serve`.',
      ...pair(5),
    ];
  }
  return [
    'Slack (Socket Mode: nothing to open to the internet)',
    `1. https://api.slack.com/apps → Create New App → From a manifest → paste ${from}.`,
    ...scopes,
    '2. Basic Information → App-Level Tokens → Generate, scope connections:write:',
    '   export SLACK_APP_TOKEN=<xapp-…>.',
    '3. Install to Workspace, then OAuth & Permissions → Bot User OAuth Token:',
    '   export SLACK_BOT_TOKEN=<xoxb-…>. Run `phasebridge serve`.',
    ...pair(4),
  ];
}

/** Discord: application, bot token, the invite URL with exact scopes and permissions. */
export function discordGuide(o: { applicationId?: string | undefined }): string[] {
  const invite = o.applicationId
    ? discordInviteUrl(o.applicationId)
    : discordInviteUrl('APPLICATION_ID').replace('APPLICATION_ID', '<application id>');
  return [
    'Discord',
    '1. https://discord.com/developers/applications → New Application.',
    '2. Bot → Reset Token: export DISCORD_BOT_TOKEN=<token>. DISCORD_APPLICATION_ID is optional',
    '   (read from the API with the token).',
    `3. Intents: ${DISCORD_INTENTS.map((i) => i.name).join(', ')} (not privileged), and under Bot →`,
    '   Privileged Gateway Intents turn Message Content on: replies to run messages are guidance',
    '   (without it everything else works; doctor says so). Leave Presence and Server Members off.',
    `4. Invite the bot (scopes ${DISCORD_SCOPES.join(' ')}, permissions ${discordPermissionInteger()}):`,
    `   ${invite}`,
    ...DISCORD_PERMISSIONS.map((p) => `     ${p.name}: ${p.why}`),
    '5. Run `phasebridge serve`: it registers the slash commands (global ones can take up to an',
    '   hour to appear); then in a channel: /pair code:CODE (the code `serve` prints).',
  ];
}
