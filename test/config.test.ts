import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { advertiseUrlOf } from '../src/app/public-url.ts';
import { loadConfig, secretsOf } from '../src/config.ts';
import { ConfigError } from '../src/errors.ts';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), 'pb-config-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function problemsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems.map((p) => `${p.path} | ${p.problem} | ${p.fix}`);
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('allows an open /metrics on loopback only', () => {
    const cwd = tmp();
    expect(loadConfig({ env: { PHASEBRIDGE_METRICS_OPEN: 'loopback' }, cwd }).metricsOpen).toBe(
      'loopback',
    );
    expect(() =>
      loadConfig({
        env: { PHASEBRIDGE_METRICS_OPEN: 'loopback', PHASEBRIDGE_HOST: '0.0.0.0' },
        cwd,
      }),
    ).toThrow(/PHASEBRIDGE_METRICS_OPEN: an open \/metrics is only allowed on a loopback address/);
  });

  it('takes PHASEBRIDGE_COORDINATOR_ON_COMPLETE archive (default) or remove, nothing else', () => {
    const cwd = tmp();
    expect(loadConfig({ env: {}, cwd }).coordinatorOnComplete).toBe('archive');
    const env = { PHASEBRIDGE_COORDINATOR_ON_COMPLETE: 'remove' };
    expect(loadConfig({ env, cwd }).coordinatorOnComplete).toBe('remove');
    const problems = problemsOf(() =>
      loadConfig({ env: { PHASEBRIDGE_COORDINATOR_ON_COMPLETE: 'delete' }, cwd }),
    );
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^PHASEBRIDGE_COORDINATOR_ON_COMPLETE \| .* \| set PHASEBRIDGE_COORDINATOR_ON_COMPLETE to archive \(default\) or remove$/,
    );
  });

  it('takes PHASEBRIDGE_AGENT_NICE from 0 to 19 (default 10) and refuses anything else', () => {
    const cwd = tmp();
    expect(loadConfig({ env: {}, cwd }).agentNice).toBe(10);
    expect(loadConfig({ env: { PHASEBRIDGE_AGENT_NICE: '0' }, cwd }).agentNice).toBe(0);
    for (const bad of ['20', '-1', '2.5', 'low']) {
      expect(problemsOf(() => loadConfig({ env: { PHASEBRIDGE_AGENT_NICE: bad }, cwd }))).toEqual([
        expect.stringMatching(
          /^PHASEBRIDGE_AGENT_NICE \| .+ \| set PHASEBRIDGE_AGENT_NICE to a number from 0 to 19 \(default 10; 0 = no change\)$/,
        ),
      ]);
    }
  });

  it('takes PHASEBRIDGE_ADVERTISE_URL as an http(s) URL; without it a leader advertises its concrete bound address', () => {
    const cwd = tmp();
    const env = { PHASEBRIDGE_ADVERTISE_URL: 'http://bridge-1:7717', PHASEBRIDGE_HOST: '0.0.0.0' };
    const set = loadConfig({ env, cwd });
    expect(advertiseUrlOf(set, 'http://0.0.0.0:7717')).toBe('http://bridge-1:7717');
    expect(
      problemsOf(() => loadConfig({ env: { PHASEBRIDGE_ADVERTISE_URL: 'bridge-1:7717' }, cwd })),
    ).toEqual([
      'PHASEBRIDGE_ADVERTISE_URL | must be an absolute http(s) URL | set PHASEBRIDGE_ADVERTISE_URL to the http(s) address other bridges reach this one at, e.g. http://bridge-1:7717',
    ]);
    const bound = (host: string) => loadConfig({ env: { PHASEBRIDGE_HOST: host }, cwd });
    expect(advertiseUrlOf(bound('10.0.0.5'), 'http://10.0.0.5:7717')).toBe('http://10.0.0.5:7717');
    // No peer connects to a wildcard: nothing is advertised (serve warns).
    expect(advertiseUrlOf(bound('0.0.0.0'), 'http://0.0.0.0:7717')).toBeUndefined();
    expect(advertiseUrlOf(bound('::'), 'http://[::]:7717')).toBeUndefined();
  });

  it('takes PHASEBRIDGE_PUBLIC_URL as an http(s) URL and refuses anything else', () => {
    const cwd = tmp();
    const env = { PHASEBRIDGE_PUBLIC_URL: 'https://pb.example.com/console/' };
    expect(loadConfig({ env, cwd }).publicUrl).toBe('https://pb.example.com/console/');
    const problems = problemsOf(() =>
      loadConfig({ env: { PHASEBRIDGE_PUBLIC_URL: 'ftp://pb.example.com' }, cwd }),
    );
    expect(problems).toEqual([
      'PHASEBRIDGE_PUBLIC_URL | must be an absolute http(s) URL | set PHASEBRIDGE_PUBLIC_URL to the https URL browsers open the console at, e.g. https://pb.example.com',
    ]);
  });

  it('works with nothing configured and applies the documented defaults', () => {
    const cwd = tmp();
    const config = loadConfig({ env: {}, cwd });
    expect(config.home).toBe(join(cwd, '.phasebridge'));
    expect(config.host).toBe('127.0.0.1');
    expect(config.port).toBe(7717);
    expect(config.redisUrl).toBeUndefined();
    expect(config.slack.command).toBe('/pb');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.telegram)).toBe(true);
  });

  it('lists every problem with its fix, not just the first', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          PHASEBRIDGE_PORT: '99999',
          LOG_LEVEL: 'loud',
          REDIS_URL: 'http://nope',
          TELEGRAM_WEBHOOK_URL: 'not a url',
        },
        cwd: tmp(),
      }),
    );
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/PHASEBRIDGE_PORT .*set PHASEBRIDGE_PORT/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL .*one of fatal, error/);
    expect(problems.join('\n')).toMatch(/REDIS_URL \| must start with redis:\/\//);
    expect(problems.join('\n')).toMatch(/TELEGRAM_WEBHOOK_URL \| must be an absolute/);
  });

  it('refuses webhook mode without a secret; Discord needs no application id (read from the API)', () => {
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          TELEGRAM_BOT_TOKEN: '123456:telegram-token-value',
          TELEGRAM_WEBHOOK_URL: 'https://bot.example.com/telegram',
          DISCORD_BOT_TOKEN: 'discord-token-value',
        },
        cwd: tmp(),
      }),
    );
    expect(problems.join('\n')).toContain('TELEGRAM_WEBHOOK_SECRET');
    expect(problems.join('\n')).not.toContain('DISCORD_APPLICATION_ID');
  });

  it('reads settings from phasebridge.config.yaml, env winning over the file', () => {
    const cwd = tmp();
    writeFileSync(
      join(cwd, 'phasebridge.config.yaml'),
      'port: 8000\nhost: 0.0.0.0\nslack:\n  command: /agents\n',
    );
    const config = loadConfig({ env: { PHASEBRIDGE_PORT: '9000' }, cwd });
    expect(config.port).toBe(9000);
    expect(config.host).toBe('0.0.0.0');
    expect(config.slack.command).toBe('/agents');
  });

  it('refuses secrets and unknown keys in the YAML file', () => {
    const cwd = tmp();
    writeFileSync(
      join(cwd, 'phasebridge.config.yaml'),
      'telegram:\n  botToken: "123456:in-a-file-is-wrong"\nmetricsToken: "scrape-token-123"\nprot: 1\n',
    );
    const problems = problemsOf(() => loadConfig({ env: {}, cwd }));
    expect(problems.join('\n')).toMatch(
      /telegram.botToken \| secrets are not read from files \| .*TELEGRAM_BOT_TOKEN/,
    );
    // Top-level secrets too, not only those inside a platform's section.
    expect(problems.join('\n')).toMatch(
      /metricsToken \| secrets are not read from files \| .*PHASEBRIDGE_METRICS_TOKEN/,
    );
    expect(problems.join('\n')).toMatch(/unknown setting\(s\) prot/);
  });

  it('collects every configured secret for redaction', () => {
    const config = loadConfig({
      env: {
        SLACK_BOT_TOKEN: 'xoxb-1234-secret',
        SLACK_SIGNING_SECRET: 'signing-secret-9',
        PHASEBRIDGE_METRICS_TOKEN: 'scrape-token-7',
      },
      cwd: tmp(),
    });
    expect(secretsOf(config).sort()).toEqual([
      'scrape-token-7',
      'signing-secret-9',
      'xoxb-1234-secret',
    ]);
  });

  it('masks the Redis password on its own, as written and decoded', () => {
    const url = 'redis://:s3cr%40tPass@Redis.Example:6379/0';
    const config = loadConfig({ env: { REDIS_URL: url }, cwd: tmp() });
    expect(secretsOf(config).sort()).toEqual([url, 's3cr%40tPass', 's3cr@tPass'].sort());
  });

  it('takes a postgres DATABASE_URL and masks its password on its own', () => {
    const url = 'postgres://bridge:pg%23Secret@db.example:5432/phasebridge';
    const config = loadConfig({ env: { DATABASE_URL: url }, cwd: tmp() });
    expect(config.databaseUrl).toBe(url);
    expect(secretsOf(config).sort()).toEqual([url, 'pg%23Secret', 'pg#Secret'].sort());
    expect(loadConfig({ env: {}, cwd: tmp() }).databaseUrl).toBeUndefined();
  });

  it('refuses a DATABASE_URL that is not postgres:// or names no database, never echoing it', () => {
    for (const [url, problem] of [
      ['mysql://root:hunter22@db/x', 'must start with postgres:// or postgresql://'],
      ['postgres://root:hunter22@db.example:5432', 'names no database'],
    ] as const) {
      const problems = problemsOf(() => loadConfig({ env: { DATABASE_URL: url }, cwd: tmp() }));
      expect(problems).toHaveLength(1);
      expect(problems[0]).toContain(`DATABASE_URL | ${problem}`);
      expect(problems[0]).toContain('set DATABASE_URL to postgres://');
      expect(problems[0]).not.toContain('hunter22');
    }
  });

  it('blames a bad value in the config file on the file and key, not on the env name', () => {
    const cwd = tmp();
    const file = join(cwd, 'phasebridge.config.yaml');
    writeFileSync(file, 'port: 99999\nlogLevel: loud\n');
    const problems = problemsOf(() => loadConfig({ env: {}, cwd }));
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      new RegExp(`^${file}: port \\| .* \\| set port in the config file to`),
    );
    expect(problems.join('\n')).toContain(`${file}: logLevel |`);
    expect(problems.join('\n')).not.toContain('PHASEBRIDGE_PORT');
    // The same value from env is blamed on env.
    const fromEnv = problemsOf(() =>
      loadConfig({ env: { PHASEBRIDGE_PORT: '99999' }, cwd: tmp() }),
    );
    expect(fromEnv[0]).toMatch(/^PHASEBRIDGE_PORT \| .* \| set PHASEBRIDGE_PORT to/);
  });

  it('refuses a plain http public URL or webhook, localhost excepted', () => {
    const cwd = tmp();
    const problems = problemsOf(() =>
      loadConfig({
        env: {
          PHASEBRIDGE_PUBLIC_URL: 'http://pb.example.com/',
          TELEGRAM_BOT_TOKEN: '123456:abcdefgh',
          TELEGRAM_WEBHOOK_URL: 'http://pb.example.com/telegram',
          TELEGRAM_WEBHOOK_SECRET: 'secret-123456',
        },
        cwd,
      }),
    );
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(
      /^PHASEBRIDGE_PUBLIC_URL \| http:\/\/pb.example.com\/ is plain http/,
    );
    expect(problems[0]).toContain('https://pb.example.com/');
    expect(problems[1]).toMatch(/^TELEGRAM_WEBHOOK_URL \| .* is plain http/);
    for (const local of [
      'http://127.0.0.1:7717/',
      'http://localhost:7717/',
      'http://[::1]:7717/',
    ]) {
      expect(loadConfig({ env: { PHASEBRIDGE_PUBLIC_URL: local }, cwd }).publicUrl).toBe(local);
    }
    expect(
      loadConfig({ env: { PHASEBRIDGE_PUBLIC_URL: 'https://pb.example.com/' }, cwd }).publicUrl,
    ).toBe('https://pb.example.com/');
  });
});
