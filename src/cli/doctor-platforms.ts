/**
 * `doctor`'s platform checks: each token against its API, with the failure told apart (DNS,
 * network, TLS, token refused, missing scope, wrong application) and the fix for that failure.
 */
import {
  DISCORD_INTENTS,
  DISCORD_PERMISSIONS,
  discordInviteUrl,
  MESSAGE_CONTENT_FIX,
  MESSAGE_CONTENT_INTENT,
  messageContentEnabled,
  missingDiscordPermissions,
  PRIVILEGED_INTENT_FLAGS,
} from '../bridges/discord/permissions.ts';
import { missingOptionalSlackScopes, missingSlackScopes } from '../bridges/slack/scopes.ts';
import type { Config } from '../config.ts';
import type { CheckResult } from './doctor-checks.ts';
import { fixFor, type ProbeAnswer, ProbeFailure, probe } from './platform-probe.ts';

/** Default API roots, as the adapters use them. */
export const API_ROOTS = {
  telegram: 'https://api.telegram.org',
  slack: 'https://slack.com/api/',
  discord: 'https://discord.com/api',
} as const;

/** Runs `calls`; a call that got no answer becomes one failed line with the fix for its cause. */
async function guarded(
  name: string,
  rootEnv: string,
  calls: () => Promise<CheckResult[]>,
): Promise<CheckResult[]> {
  try {
    return await calls();
  } catch (err) {
    if (!(err instanceof ProbeFailure)) throw err;
    return [{ name, ok: false, detail: err.message, fix: fixFor(err, rootEnv) }];
  }
}

const TELEGRAM_TOKEN_FIX =
  'send /mybots to @BotFather, pick the bot, "API Token", and set TELEGRAM_BOT_TOKEN to it';

/** getMe (token, privacy mode) and getWebhookInfo (delivery mode, pending updates, last error). */
export function checkTelegram(t: Config['telegram']): Promise<CheckResult[]> {
  const root = `${(t.apiRoot ?? API_ROOTS.telegram).replace(/\/$/, '')}/bot${t.botToken}`;
  return guarded('telegram', 'TELEGRAM_API_ROOT', async () => {
    const me = await probe(`${root}/getMe`, {});
    if (me.body.ok !== true) {
      // Telegram answers 404 to a malformed token and 401 to a revoked one.
      return [{ name: 'telegram', ok: false, detail: refusal(me), fix: TELEGRAM_TOKEN_FIX }];
    }
    const bot = me.body.result as { username?: string; can_read_all_group_messages?: boolean };
    const privacy = bot.can_read_all_group_messages
      ? 'privacy mode off (sees every group message)'
      : 'privacy mode on (in groups it sees /commands and replies to it)';
    const out: CheckResult[] = [
      { name: 'telegram', ok: true, detail: `bot @${bot.username ?? '?'}, ${privacy}` },
    ];
    const info = await probe(`${root}/getWebhookInfo`, {});
    out.push(webhookResult(info.body.result as WebhookInfo | undefined, t.webhookUrl));
    return out;
  });
}

interface WebhookInfo {
  url?: string;
  pending_update_count?: number;
  last_error_date?: number;
  last_error_message?: string;
}

function webhookResult(info: WebhookInfo | undefined, configured: string | undefined): CheckResult {
  const name = 'telegram webhook';
  const pending = `${info?.pending_update_count ?? 0} pending update(s)`;
  const registered = info?.url ?? '';
  if (!configured && registered !== '') {
    return {
      name,
      ok: false,
      detail: `a webhook is registered (${registered}) but this bridge polls: another deployment may take the updates; ${pending}`,
      fix: 'stop the other deployment, or set TELEGRAM_WEBHOOK_URL to that URL; `serve` in polling mode removes the webhook',
    };
  }
  if (configured && registered !== '' && registered !== configured) {
    return {
      name,
      ok: false,
      detail: `Telegram delivers to ${registered}, not to TELEGRAM_WEBHOOK_URL; ${pending}`,
      fix: 'stop the deployment that registered it; `serve` registers TELEGRAM_WEBHOOK_URL when it starts',
    };
  }
  if (configured && info?.last_error_message) {
    const when = info.last_error_date ? new Date(info.last_error_date * 1000).toISOString() : '?';
    return {
      name,
      ok: false,
      detail: `last delivery failed at ${when}: ${info.last_error_message}; ${pending}`,
      fix: `make ${configured} reachable from the internet over https (valid certificate), forwarding its path to this bridge with the X-Telegram-Bot-Api-Secret-Token header intact`,
    };
  }
  const mode = configured
    ? registered === ''
      ? 'webhook mode (registered by `serve` on start)'
      : 'webhook mode, registered'
    : 'polling mode';
  return { name, ok: true, detail: `${mode}, ${pending}` };
}

const SLACK_REFUSED = new Set([
  'invalid_auth',
  'not_authed',
  'account_inactive',
  'token_revoked',
  'token_expired',
]);

/** auth.test (token) and its `x-oauth-scopes` header against the scopes table. */
export function checkSlack(s: Config['slack']): Promise<CheckResult[]> {
  const base = s.apiUrl ?? API_ROOTS.slack;
  const url = `${base.endsWith('/') ? base : `${base}/`}auth.test`;
  return guarded('slack', 'SLACK_API_URL', async () => {
    const auth = await probe(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.botToken}` },
    });
    if (auth.body.ok !== true) {
      const error = String(auth.body.error ?? `HTTP ${auth.status}`);
      return [
        {
          name: 'slack',
          ok: false,
          detail: `auth.test refused the token: ${error}`,
          fix: SLACK_REFUSED.has(error)
            ? 'copy the Bot User OAuth Token (xoxb-) from OAuth & Permissions (reinstall the app if it was revoked) into SLACK_BOT_TOKEN'
            : 'see https://api.slack.com/methods/auth.test for this error',
        },
      ];
    }
    const who = `team ${String(auth.body.team ?? '?')}, bot user ${String(auth.body.user ?? '?')}`;
    const header = auth.headers.get('x-oauth-scopes');
    if (header === null)
      return [{ name: 'slack', ok: true, detail: `${who} (scopes not reported)` }];
    const missing = missingSlackScopes(header);
    const optional = missingOptionalSlackScopes(header);
    if (missing.length === 0 && optional.length > 0) {
      const without = `${who}, scopes complete but optional ${optional.join(', ')} (people seen only in thread replies are shown by id)`;
      return [{ name: 'slack', ok: true, detail: without }];
    }
    if (missing.length === 0)
      return [{ name: 'slack', ok: true, detail: `${who}, scopes complete` }];
    return [
      {
        name: 'slack',
        ok: false,
        detail: `${who}; the token lacks scope(s) ${missing.join(', ')}`,
        fix: 'add them under OAuth & Permissions → Bot Token Scopes (or update the app from `phasebridge setup slack`), then reinstall the app to the workspace',
      },
    ];
  });
}

const DISCORD_TOKEN_FIX =
  'Developer Portal → your application → Bot → Reset Token, and set DISCORD_BOT_TOKEN to it';

/** GET /applications/@me: the token, the application id (vs DISCORD_APPLICATION_ID), intents. */
export function checkDiscord(d: Config['discord']): Promise<CheckResult[]> {
  const root = `${(d.apiUrl ?? API_ROOTS.discord).replace(/\/$/, '')}/v10`;
  return guarded('discord', 'DISCORD_API_URL', async () => {
    const app = await probe(`${root}/applications/@me`, {
      headers: { authorization: `Bot ${d.botToken}` },
    });
    if (app.status === 401) {
      return [
        {
          name: 'discord',
          ok: false,
          detail: 'the token was refused (401)',
          fix: DISCORD_TOKEN_FIX,
        },
      ];
    }
    if (app.status !== 200) return [unexpected('discord', '/applications/@me', app)];
    const id = String(app.body.id ?? '?');
    if (d.applicationId && d.applicationId !== id) {
      return [
        {
          name: 'discord',
          ok: false,
          detail: `DISCORD_APPLICATION_ID is ${d.applicationId} but the token belongs to application ${id}`,
          fix: `unset DISCORD_APPLICATION_ID (it is read from the API), or use the token of application ${d.applicationId}`,
        },
      ];
    }
    const flags = Number(app.body.flags ?? 0);
    const extra = PRIVILEGED_INTENT_FLAGS.filter(
      (p) => p.name !== 'Message Content' && (flags & p.flags) !== 0,
    ).map((p) => p.name);
    const content = messageContentEnabled(flags);
    const intents = `intents ${DISCORD_INTENTS.map((i) => i.name).join(', ')}${
      content ? `, ${MESSAGE_CONTENT_INTENT.name} (privileged, enabled)` : ''
    }${extra.length > 0 ? `; ${extra.join(', ')} enabled but unused` : ''}`;
    const app_ = `application ${String(app.body.name ?? '?')} (${id}), ${intents}`;
    const permissions = await discordPermissionsCheck(root, d.botToken!, id);
    if (content) return [{ name: 'discord', ok: true, detail: app_ }, permissions];
    // Everything but guidance replies works without it: a warning with the fix, not a failure.
    const off = `the Message Content intent is off, so replies to run messages are not seen as guidance (${MESSAGE_CONTENT_FIX})`;
    return [{ name: 'discord', ok: true, detail: `${app_}; ${off}` }, permissions];
  });
}

/**
 * The bot's permissions in each server it is in (`GET /users/@me/guilds`, server-wide: channel
 * overwrites are not read), each missing one named with what it disables.
 */
async function discordPermissionsCheck(
  root: string,
  token: string,
  applicationId: string,
): Promise<CheckResult> {
  const name = 'discord permissions';
  const guilds = await probe(`${root}/users/@me/guilds`, {
    headers: { authorization: `Bot ${token}` },
  });
  const body: unknown = guilds.body;
  if (guilds.status !== 200 || !Array.isArray(body)) {
    return unexpected(name, '/users/@me/guilds', guilds);
  }
  const invite = discordInviteUrl(applicationId);
  const list = body as { id?: unknown; name?: unknown; permissions?: unknown }[];
  if (list.length === 0) {
    return { name, ok: true, detail: `the bot is in no server yet; invite it with ${invite}` };
  }
  const problems: string[] = [];
  for (const g of list) {
    const missing = missingDiscordPermissions(BigInt(String(g.permissions ?? '0')));
    for (const p of missing) {
      problems.push(`server ${String(g.name ?? g.id)} lacks ${p.name}: ${p.without}`);
    }
  }
  if (problems.length === 0) {
    return {
      name,
      ok: true,
      detail: `all ${DISCORD_PERMISSIONS.length} needed in ${list.length} server(s)`,
    };
  }
  return {
    name,
    ok: false,
    detail: problems.join('; '),
    fix: `grant them to the bot's role (Server Settings → Roles), or invite it again with ${invite}`,
  };
}

function refusal(a: ProbeAnswer): string {
  return `the token was refused (${a.status} ${String(a.body.description ?? '')})`.replace(
    ' )',
    ')',
  );
}

function unexpected(name: string, what: string, a: ProbeAnswer): CheckResult {
  return {
    name,
    ok: false,
    detail: `${what} answered ${a.status}`,
    fix: 'retry later; if it persists, check the platform status page',
  };
}
