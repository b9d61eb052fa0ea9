/**
 * What is wrong with a configuration beyond its schema (config.ts): the cross-checks between
 * settings, and each problem's path and fix phrased for where its value came from (env or file).
 */
import type * as z from 'zod/mini';
import type { $ZodIssue } from 'zod/v4/core';
import type { configSchema } from './config.ts';
import { isPlainObject } from './config-layers.ts';
import { ENV_OF, FIXES } from './config-names.ts';
import type { ConfigProblem } from './errors.ts';

/**
 * Where a config path's value came from, for messages: its env name when env set it, else
 * `<file>: <key>` when the YAML file did, else (a default) the env name that would set it.
 */
export type SourceOf = (key: string) => string;

/** Where each config path's value came from (SourceOf), given the layers and the file's path. */
export function sourceOf(
  envLayer: Record<string, unknown>,
  fileLayer: Record<string, unknown>,
  filePath: string,
): SourceOf {
  const has = (layer: Record<string, unknown>, key: string): boolean => {
    let at: unknown = layer;
    for (const part of key.split('.')) {
      if (!isPlainObject(at) || at[part] === undefined) return false;
      at = at[part];
    }
    return true;
  };
  return (key) => {
    if (key === '') return filePath; // unknown top-level settings can only come from the file
    const env = ENV_OF[key];
    if (env && has(envLayer, key)) return env;
    if (key !== '' && has(fileLayer, key)) return `${filePath}: ${key}`;
    return env ?? key;
  };
}

/** The fix for `key`, phrased for the file when the value came from it. */
function fixOf(key: string, source: string, fallback = 'see docs/configuration.md'): string {
  const fix = FIXES[key] ?? fallback;
  const env = ENV_OF[key];
  if (!env || source === env) return fix;
  return fix.replace(`set ${env} to`, `set ${key} in the config file to`).replace(env, key);
}

/** True for a host name or address that only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h.endsWith('.localhost') || h === '::1' || /^127\./.test(h);
}

/** A public URL must be https (Slack and Telegram refuse anything else), loopback excepted. */
function plainHttpProblem(value: string | undefined, key: string, source: SourceOf) {
  if (!value) return [];
  const u = new URL(value);
  if (u.protocol !== 'http:' || isLoopbackHost(u.hostname)) return [];
  return [
    {
      path: source(key),
      problem: `${value} is plain http: Slack and Telegram only call https URLs, and console sessions would travel unencrypted`,
      fix: `use the https URL of your TLS proxy (https://${u.host}${u.pathname}); plain http is accepted only for localhost`,
    },
  ];
}

/** Problems between settings the schema alone cannot see (plain http, missing secrets…). */
export function crossChecks(c: z.infer<typeof configSchema>, source: SourceOf): ConfigProblem[] {
  const out: ConfigProblem[] = [
    ...plainHttpProblem(c.publicUrl, 'publicUrl', source),
    ...plainHttpProblem(c.telegram.webhookUrl, 'telegram.webhookUrl', source),
  ];
  if (c.metricsOpen && !/^(127\.|localhost$|::1$|\[::1\]$)/.test(c.host)) {
    out.push({
      path: source('metricsOpen'),
      problem: `an open /metrics is only allowed on a loopback address, not ${c.host}`,
      fix: 'unset it and give the scraper PHASEBRIDGE_METRICS_TOKEN, or listen on 127.0.0.1',
    });
  }
  if (c.workspaceMode === 'git' && !c.redisUrl) {
    out.push({
      path: source('workspaceMode'),
      problem: 'git workspace mode is for workers on other machines, which need the BullMQ queue',
      fix: 'set REDIS_URL too, or set PHASEBRIDGE_WORKSPACE_MODE=shared',
    });
  }
  if (c.telegram.webhookUrl && !c.telegram.webhookSecret) {
    out.push({
      path: 'TELEGRAM_WEBHOOK_SECRET',
      problem: 'webhook mode needs a secret so forged updates are refused',
      fix: FIXES['telegram.webhookSecret']!,
    });
  }
  if (c.telegram.webhookUrl && !c.telegram.botToken) {
    out.push({
      path: 'TELEGRAM_BOT_TOKEN',
      problem: 'TELEGRAM_WEBHOOK_URL is set but there is no bot token',
      fix: FIXES['telegram.botToken']!,
    });
  }
  if (c.slack.botToken && !c.slack.appToken && !c.slack.signingSecret) {
    out.push({
      path: 'SLACK_SIGNING_SECRET',
      problem: 'Slack HTTP mode needs the signing secret to verify requests',
      fix: `${FIXES['slack.signingSecret']}, or set SLACK_APP_TOKEN for Socket Mode`,
    });
  }
  // The signing secret alone is allowed: serve answers Slack's URL check before the app is installed.
  if (c.slack.appToken && !c.slack.botToken) {
    out.push({
      path: 'SLACK_BOT_TOKEN',
      problem: 'Slack settings are present but there is no bot token',
      fix: FIXES['slack.botToken']!,
    });
  }
  return out;
}

/** A schema issue as a ConfigProblem: its source, what is wrong and the fix. */
export function problemOf(issue: $ZodIssue, source: SourceOf): ConfigProblem {
  const key = issue.path.join('.');
  const unknown = issue.code === 'unrecognized_keys';
  const path = source(key);
  return {
    path,
    problem: unknown ? `unknown setting(s) ${issue.keys.join(', ')}` : issue.message,
    fix: unknown
      ? 'remove them; the settings are listed in docs/configuration.md'
      : fixOf(key, path),
  };
}
