/**
 * The layers of the configuration before it is validated (config.ts): defaults, the YAML file and
 * the environment, merged in that order (env wins).
 */

/** The settings the environment sets, by config path (undefined where unset or empty). */
export function fromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
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
export function mergeRaw(file: Record<string, unknown>, env: Record<string, unknown>) {
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

/** True for an object of settings (not null, not an array). */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `o` without its undefined values. */
function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
