import { join, resolve } from 'node:path';
// zod/mini: the config is read by every CLI command; the classic API costs ~15 ms to load.
import * as z from 'zod/mini';
import type { $ZodIssue } from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';
import { readConfigFile } from './config-file.ts';
import { ENV_OF, FIXES, LOG_LEVELS, SECRET_PATHS } from './config-names.ts';
import { databaseUrlProblem } from './database-url.ts';
import { DURATION_HINT, parseDuration } from './engine/workflow/duration.ts';
import { ConfigError, type ConfigProblem } from './errors.ts';

export { CONFIG_ENV_NAMES, SECRET_ENV_NAMES } from './config-names.ts';

// The classic API loads English messages itself; mini leaves them to us.
z.config(en());

const url = z.url({ message: 'must be an absolute http(s) URL' });
const secret = z
  .string()
  .check(z.minLength(8, { message: 'is too short to be a real token or secret' }));
const nonEmpty = () => z.string().check(z.minLength(1));
const matching = (re: RegExp, message: string) => z.string().check(z.regex(re, { message }));
const duration = () =>
  z.string().check(
    z.refine((s) => parseDuration(s) !== null, {
      message: `is not a duration: ${DURATION_HINT}`,
    }),
  );
/** A count of finished jobs to keep: a whole number from 0 to a million. */
const keepCount = () => z.pipe(z.coerce.number(), z.int().check(z.gte(0), z.lte(1_000_000)));

/** The whole configuration of phasebridge; every value has one home here. */
export const configSchema = z.strictObject({
  home: nonEmpty(),
  /** Where console runs and paired chats work; default `<home>/workspace`. */
  workspace: z.optional(nonEmpty()),
  host: nonEmpty(),
  port: z.pipe(z.coerce.number(), z.int().check(z.gte(0), z.lte(65535))),
  /** The console's address as browsers reach it (e.g. a TLS proxy): printed links, Secure cookies. */
  publicUrl: z.optional(
    z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }),
  ),
  /**
   * Where the other `serve` of a leader election reach this bridge's console (its standbys
   * forward to it); default the bound address unless that is 0.0.0.0 or ::.
   */
  advertiseUrl: z.optional(
    z.url({ protocol: /^https?$/, message: 'must be an absolute http(s) URL' }),
  ),
  redisUrl: z.optional(matching(/^rediss?:\/\//, 'must start with redis:// or rediss://')),
  /** bridge.db on Postgres (postgres://…); unset: the embedded SQLite file in `home`. */
  databaseUrl: z.optional(
    z.string().check(
      z.superRefine((value, ctx) => {
        const problem = databaseUrlProblem(value);
        // The message never repeats the value: it may hold a password.
        if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem, input: '' });
      }),
    ),
  ),
  /** How workers reach run workspaces: the same path (`shared`) or a git clone of `origin` (`git`). */
  workspaceMode: z.enum(['shared', 'git']),
  /** What a completed coordinator session's `.coordinator/` becomes when its workflow does not say. */
  coordinatorOnComplete: z.enum(['archive', 'remove']),
  /** BullMQ job lease (ms): a job whose worker vanished is taken again within this time. */
  jobLeaseMs: z.pipe(z.coerce.number(), z.int().check(z.gte(1000), z.lte(3_600_000))),
  /**
   * Leader lease in Redis (ms) when several `serve` share DATABASE_URL and REDIS_URL: a standby
   * takes over within about this time after the leader dies.
   */
  leaderLeaseMs: z.pipe(z.coerce.number(), z.int().check(z.gte(1000), z.lte(60_000))),
  /**
   * How much lower than ours the CPU priority of agents is (a `nice` increment, 0 = the same):
   * busy agents must not slow the bridge's answers and spawns.
   */
  agentNice: z.pipe(z.coerce.number(), z.int().check(z.gte(0), z.lte(19))),
  logLevel: z.enum(LOG_LEVELS),
  /** Files attached to a `run` or a guidance reply (docs/feedback.md "Files in, files out"). */
  inputs: z.strictObject({
    /** Largest file accepted, in bytes (default 10 MiB); also the cap of a file an agent sends. */
    maxBytes: z.pipe(z.coerce.number(), z.int().check(z.gte(1), z.lte(100 * 1024 * 1024))),
    /** Most files one message may carry (default 5). */
    maxFiles: z.pipe(z.coerce.number(), z.int().check(z.gte(0), z.lte(20))),
  }),
  /** Bearer token a Prometheus scraper sends to read /metrics without a console session. */
  metricsToken: z.optional(secret),
  /** `loopback`: /metrics answers without auth (only allowed when the bridge listens on loopback). */
  metricsOpen: z.optional(z.enum(['loopback'])),
  /** `x-forwarded-proto`: believe a TLS proxy's `X-Forwarded-Proto` header (the console off loopback). */
  trustProxy: z.optional(z.enum(['x-forwarded-proto'])),
  /** How long finished work is kept in bridge.db before `prune` (and serve, periodically) drops it. */
  retention: z.strictObject({
    /** Finished jobs of the embedded queue (of finished runs). */
    jobs: duration(),
    /** Audit rows; exported as JSON Lines under `<home>/audit/` before they are deleted. */
    audit: duration(),
    /** BullMQ: the newest completed jobs Redis keeps (besides the `jobs` age); default 1000. */
    keepCompleted: z.optional(keepCount()),
    /** BullMQ: the newest failed jobs Redis keeps (besides the `jobs` age); default 5000. */
    keepFailed: z.optional(keepCount()),
  }),
  telegram: z.strictObject({
    botToken: z.optional(secret),
    apiRoot: z.optional(url),
    webhookUrl: z.optional(url),
    webhookSecret: z.optional(
      matching(
        /^[A-Za-z0-9_-]{8,256}$/,
        'must be 8-256 characters of A-Z, a-z, 0-9, _ and - (Telegram rule)',
      ),
    ),
  }),
  slack: z.strictObject({
    botToken: z.optional(secret),
    signingSecret: z.optional(secret),
    appToken: z.optional(secret),
    apiUrl: z.optional(url),
    command: matching(/^\/[a-z0-9_-]{1,31}$/, 'must be a slash command such as /pb'),
  }),
  discord: z.strictObject({
    botToken: z.optional(secret),
    /** Optional: the bridge reads it from the API; when set, `doctor` checks the token matches. */
    applicationId: z.optional(matching(/^[0-9]{5,25}$/, 'must be a numeric snowflake id')),
    apiUrl: z.optional(url),
  }),
});

/** The validated, deeply frozen configuration. */
export type Config = Readonly<
  Omit<z.infer<typeof configSchema>, 'workspace'> & { workspace: string }
>;

/** Options of loadConfig; defaults read the real process. */
export interface LoadConfigOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Path of the YAML file; default `phasebridge.config.yaml` in cwd, or PHASEBRIDGE_CONFIG. */
  file?: string;
}

/** Reads env and the optional YAML file, validates once, and returns a frozen config. */
export function loadConfig(options: LoadConfigOptions = {}): Config {
  const env = options.env ?? process.env;
  const cwd = options.cwd ?? process.cwd();
  const problems: ConfigProblem[] = [];
  const filePath = resolve(
    cwd,
    options.file ?? env.PHASEBRIDGE_CONFIG ?? 'phasebridge.config.yaml',
  );
  const fromFile = readConfigFile(
    filePath,
    (options.file ?? env.PHASEBRIDGE_CONFIG) !== undefined,
    SECRET_PATHS,
    problems,
  );
  const envLayer = fromEnv(env);
  const source = sourceOf(envLayer, fromFile, filePath);
  const raw = mergeRaw(fromFile, envLayer);
  const parsed = configSchema.safeParse(raw);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) problems.push(problemOf(issue, source));
  } else {
    problems.push(...crossChecks(parsed.data, source));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const data = parsed.data!;
  const home = resolve(cwd, data.home);
  const workspace = resolve(cwd, data.workspace ?? join(home, 'workspace'));
  return deepFreeze({ ...data, home, workspace });
}

/** Every secret value present in a config: the logger redacts each of them. */
export function secretsOf(config: Config): string[] {
  const values = [
    config.telegram.botToken,
    config.telegram.webhookSecret,
    config.slack.botToken,
    config.slack.signingSecret,
    config.slack.appToken,
    config.discord.botToken,
    config.redisUrl,
    config.databaseUrl,
    config.metricsToken,
  ];
  const secrets = values.filter((v): v is string => typeof v === 'string' && v.length > 0);
  // A logged URL is often re-serialised (host lower-cased, etc.): mask the password on its own too.
  if (config.redisUrl) secrets.push(...urlPasswords(config.redisUrl));
  if (config.databaseUrl) secrets.push(...urlPasswords(config.databaseUrl));
  return secrets;
}

/** The password of a URL as written and decoded (none when it has none or does not parse). */
function urlPasswords(text: string): string[] {
  try {
    const raw = new URL(text).password;
    return raw === '' ? [] : [...new Set([raw, decodeURIComponent(raw)])];
  } catch {
    return [];
  }
}

function fromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const v = (name: string) => (env[name] === '' ? undefined : env[name]);
  return {
    home: v('PHASEBRIDGE_HOME'),
    workspace: v('PHASEBRIDGE_WORKSPACE'),
    host: v('PHASEBRIDGE_HOST'),
    port: v('PHASEBRIDGE_PORT'),
    publicUrl: v('PHASEBRIDGE_PUBLIC_URL'),
    advertiseUrl: v('PHASEBRIDGE_ADVERTISE_URL'),
    redisUrl: v('REDIS_URL'),
    databaseUrl: v('DATABASE_URL'),
    workspaceMode: v('PHASEBRIDGE_WORKSPACE_MODE'),
    coordinatorOnComplete: v('PHASEBRIDGE_COORDINATOR_ON_COMPLETE'),
    jobLeaseMs: v('PHASEBRIDGE_JOB_LEASE_MS'),
    leaderLeaseMs: v('PHASEBRIDGE_LEADER_LEASE_MS'),
    agentNice: v('PHASEBRIDGE_AGENT_NICE'),
    logLevel: v('LOG_LEVEL'),
    inputs: {
      maxBytes: v('PHASEBRIDGE_MAX_INPUT_BYTES'),
      maxFiles: v('PHASEBRIDGE_MAX_INPUT_FILES'),
    },
    metricsToken: v('PHASEBRIDGE_METRICS_TOKEN'),
    metricsOpen: v('PHASEBRIDGE_METRICS_OPEN'),
    trustProxy: v('PHASEBRIDGE_TRUST_PROXY'),
    retention: {
      jobs: v('PHASEBRIDGE_RETAIN_JOBS'),
      audit: v('PHASEBRIDGE_RETAIN_AUDIT'),
      keepCompleted: v('PHASEBRIDGE_BULLMQ_KEEP_COMPLETED'),
      keepFailed: v('PHASEBRIDGE_BULLMQ_KEEP_FAILED'),
    },
    telegram: {
      botToken: v('TELEGRAM_BOT_TOKEN'),
      apiRoot: v('TELEGRAM_API_ROOT'),
      webhookUrl: v('TELEGRAM_WEBHOOK_URL'),
      webhookSecret: v('TELEGRAM_WEBHOOK_SECRET'),
    },
    slack: {
      botToken: v('SLACK_BOT_TOKEN'),
      signingSecret: v('SLACK_SIGNING_SECRET'),
      appToken: v('SLACK_APP_TOKEN'),
      apiUrl: v('SLACK_API_URL'),
      command: v('SLACK_COMMAND'),
    },
    discord: {
      botToken: v('DISCORD_BOT_TOKEN'),
      applicationId: v('DISCORD_APPLICATION_ID'),
      apiUrl: v('DISCORD_API_URL'),
    },
  };
}

const DEFAULTS = {
  home: './.phasebridge',
  host: '127.0.0.1',
  port: 7717,
  workspaceMode: 'shared',
  coordinatorOnComplete: 'archive',
  jobLeaseMs: 60_000,
  leaderLeaseMs: 5_000,
  agentNice: 10,
  logLevel: 'info',
  inputs: { maxBytes: 10 * 1024 * 1024, maxFiles: 5 },
  retention: { jobs: '30d', audit: '365d' },
  telegram: {},
  slack: { command: '/pb' },
  discord: {},
};

/** Layers: defaults < YAML file < env (env wins, so a deployment can override a checked-in file). */
function mergeRaw(file: Record<string, unknown>, env: Record<string, unknown>) {
  const out: Record<string, unknown> = structuredClone(DEFAULTS);
  for (const layer of [file, env]) {
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      const current = out[key];
      if (isPlainObject(value) && isPlainObject(current)) {
        out[key] = { ...current, ...dropUndefined(value) };
      } else {
        out[key] = value;
      }
    }
  }
  return out;
}

/**
 * Where a config path's value came from, for messages: its env name when env set it, else
 * `<file>: <key>` when the YAML file did, else (a default) the env name that would set it.
 */
type SourceOf = (key: string) => string;

function sourceOf(
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

function crossChecks(c: z.infer<typeof configSchema>, source: SourceOf): ConfigProblem[] {
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

function problemOf(issue: $ZodIssue, source: SourceOf): ConfigProblem {
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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function deepFreeze<T>(value: T): T {
  if (isPlainObject(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
