import { join, resolve } from 'node:path';
// zod/mini: the config is read by every CLI command; the classic API costs ~15 ms to load.
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { crossChecks, problemOf, sourceOf } from './config-checks.ts';
import { readConfigFile } from './config-file.ts';
import { fromEnv, isPlainObject, mergeRaw } from './config-layers.ts';
import { LOG_LEVELS, SECRET_PATHS } from './config-names.ts';
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

/** `value` and every object in it, frozen. */
function deepFreeze<T>(value: T): T {
  if (isPlainObject(value)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
