/**
 * Where each setting of the config comes from and how a person fixes it: the env name of every
 * config path, which ones are secrets, and the fix shown beside a problem (config.ts reads them).
 */
/** Env names that hold secrets: they are read from env only and redacted from every log line. */
export const SECRET_ENV_NAMES = [
  'TELEGRAM_BOT_TOKEN',
  'TELEGRAM_WEBHOOK_SECRET',
  'SLACK_BOT_TOKEN',
  'SLACK_SIGNING_SECRET',
  'SLACK_APP_TOKEN',
  'DISCORD_BOT_TOKEN',
  'REDIS_URL',
  'DATABASE_URL',
  'PHASEBRIDGE_METRICS_TOKEN',
] as const;

/** The log levels LOG_LEVEL takes (pino's). */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Fixes shown next to each problem, by the config path's first segments. */
export const FIXES: Record<string, string> = {
  home: 'set PHASEBRIDGE_HOME to a writable folder (default ./.phasebridge)',
  workspace: 'set PHASEBRIDGE_WORKSPACE to the folder console runs work in',
  host: 'set PHASEBRIDGE_HOST to an interface address such as 127.0.0.1',
  port: 'set PHASEBRIDGE_PORT to a number from 0 to 65535 (default 7717)',
  metricsToken:
    'set PHASEBRIDGE_METRICS_TOKEN to a long random string, e.g. `openssl rand -hex 24`',
  metricsOpen: 'set PHASEBRIDGE_METRICS_OPEN=loopback or unset it',
  trustProxy: 'set PHASEBRIDGE_TRUST_PROXY=x-forwarded-proto or unset it',
  'retention.jobs': 'set PHASEBRIDGE_RETAIN_JOBS to a duration such as 30d (the default)',
  'retention.audit': 'set PHASEBRIDGE_RETAIN_AUDIT to a duration such as 365d (the default)',
  'retention.keepCompleted':
    'set PHASEBRIDGE_BULLMQ_KEEP_COMPLETED to a whole number from 0 to 1000000 (default 1000)',
  'retention.keepFailed':
    'set PHASEBRIDGE_BULLMQ_KEEP_FAILED to a whole number from 0 to 1000000 (default 5000)',
  publicUrl:
    'set PHASEBRIDGE_PUBLIC_URL to the https URL browsers open the console at, e.g. https://pb.example.com',
  advertiseUrl:
    'set PHASEBRIDGE_ADVERTISE_URL to the http(s) address other bridges reach this one at, e.g. http://bridge-1:7717',
  redisUrl: 'set REDIS_URL to redis://host:6379, or unset it to use the embedded queue',
  databaseUrl:
    'set DATABASE_URL to postgres://user:password@host:5432/dbname, or unset it to keep bridge.db in SQLite',
  workspaceMode: 'set PHASEBRIDGE_WORKSPACE_MODE to shared (default) or git',
  coordinatorOnComplete: 'set PHASEBRIDGE_COORDINATOR_ON_COMPLETE to archive (default) or remove',
  jobLeaseMs:
    'set PHASEBRIDGE_JOB_LEASE_MS to milliseconds between 1000 and 3600000 (default 60000)',
  leaderLeaseMs:
    'set PHASEBRIDGE_LEADER_LEASE_MS to milliseconds between 1000 and 60000 (default 5000)',
  agentNice: 'set PHASEBRIDGE_AGENT_NICE to a number from 0 to 19 (default 10; 0 = no change)',
  logLevel: `set LOG_LEVEL to one of ${LOG_LEVELS.join(', ')}`,
  'inputs.maxBytes':
    'set PHASEBRIDGE_MAX_INPUT_BYTES to bytes from 1 to 104857600 (default 10485760, 10 MiB)',
  'inputs.maxFiles': 'set PHASEBRIDGE_MAX_INPUT_FILES to a number from 0 to 20 (default 5)',
  'telegram.botToken': 'set TELEGRAM_BOT_TOKEN to the token @BotFather gave you',
  'telegram.apiRoot':
    'set TELEGRAM_API_ROOT to the Bot API server root, e.g. https://api.telegram.org',
  'telegram.webhookUrl': 'set TELEGRAM_WEBHOOK_URL to the public https URL of this bridge',
  'telegram.webhookSecret': 'set TELEGRAM_WEBHOOK_SECRET to a random string (openssl rand -hex 32)',
  'slack.botToken': 'set SLACK_BOT_TOKEN to the xoxb- token of your Slack app',
  'slack.signingSecret': "set SLACK_SIGNING_SECRET to the app's signing secret (Basic Information)",
  'slack.appToken':
    'set SLACK_APP_TOKEN to an xapp- token for Socket Mode, or unset it for HTTP mode',
  'slack.apiUrl': 'set SLACK_API_URL to the Web API root, e.g. https://slack.com/api/',
  'slack.command': 'set SLACK_COMMAND to the slash command you registered, e.g. /pb',
  'discord.botToken': 'set DISCORD_BOT_TOKEN to the bot token from the Developer Portal',
  'discord.applicationId':
    'set DISCORD_APPLICATION_ID to the numeric application id, or unset it (read from the API)',
  'discord.apiUrl': 'set DISCORD_API_URL to the REST root, e.g. https://discord.com/api',
};

/** Where each config path comes from in env, for messages. */
export const ENV_OF: Record<string, string> = {
  home: 'PHASEBRIDGE_HOME',
  workspace: 'PHASEBRIDGE_WORKSPACE',
  host: 'PHASEBRIDGE_HOST',
  port: 'PHASEBRIDGE_PORT',
  publicUrl: 'PHASEBRIDGE_PUBLIC_URL',
  advertiseUrl: 'PHASEBRIDGE_ADVERTISE_URL',
  redisUrl: 'REDIS_URL',
  databaseUrl: 'DATABASE_URL',
  workspaceMode: 'PHASEBRIDGE_WORKSPACE_MODE',
  coordinatorOnComplete: 'PHASEBRIDGE_COORDINATOR_ON_COMPLETE',
  jobLeaseMs: 'PHASEBRIDGE_JOB_LEASE_MS',
  leaderLeaseMs: 'PHASEBRIDGE_LEADER_LEASE_MS',
  agentNice: 'PHASEBRIDGE_AGENT_NICE',
  logLevel: 'LOG_LEVEL',
  'inputs.maxBytes': 'PHASEBRIDGE_MAX_INPUT_BYTES',
  'inputs.maxFiles': 'PHASEBRIDGE_MAX_INPUT_FILES',
  metricsToken: 'PHASEBRIDGE_METRICS_TOKEN',
  metricsOpen: 'PHASEBRIDGE_METRICS_OPEN',
  trustProxy: 'PHASEBRIDGE_TRUST_PROXY',
  'retention.jobs': 'PHASEBRIDGE_RETAIN_JOBS',
  'retention.audit': 'PHASEBRIDGE_RETAIN_AUDIT',
  'retention.keepCompleted': 'PHASEBRIDGE_BULLMQ_KEEP_COMPLETED',
  'retention.keepFailed': 'PHASEBRIDGE_BULLMQ_KEEP_FAILED',
  'telegram.botToken': 'TELEGRAM_BOT_TOKEN',
  'telegram.apiRoot': 'TELEGRAM_API_ROOT',
  'telegram.webhookUrl': 'TELEGRAM_WEBHOOK_URL',
  'telegram.webhookSecret': 'TELEGRAM_WEBHOOK_SECRET',
  'slack.botToken': 'SLACK_BOT_TOKEN',
  'slack.signingSecret': 'SLACK_SIGNING_SECRET',
  'slack.appToken': 'SLACK_APP_TOKEN',
  'slack.apiUrl': 'SLACK_API_URL',
  'slack.command': 'SLACK_COMMAND',
  'discord.botToken': 'DISCORD_BOT_TOKEN',
  'discord.applicationId': 'DISCORD_APPLICATION_ID',
  'discord.apiUrl': 'DISCORD_API_URL',
};

/** Every env name the config reads (the docs may name no other PHASEBRIDGE_* setting). */
export const CONFIG_ENV_NAMES: readonly string[] = [...Object.values(ENV_OF), 'PHASEBRIDGE_CONFIG'];

/** Config paths that are secrets (refused in the YAML file), with their env names. */
export const SECRET_PATHS: ReadonlyMap<string, string> = new Map(
  Object.entries(ENV_OF).filter(([, env]) => (SECRET_ENV_NAMES as readonly string[]).includes(env)),
);
