import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig, secretsOf } from '../src/config.ts';
import { componentLogger, createLogger } from '../src/log.ts';

function collector() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { lines, stream };
}

const TOKEN = '7001234567:AAH-telegram-bot-token_value';
const SIGNING = 'slack"signing\\secret';

describe('logger redaction', () => {
  const config = loadConfig({
    env: {
      TELEGRAM_BOT_TOKEN: TOKEN,
      SLACK_BOT_TOKEN: 'xoxb-slack-bot-token',
      SLACK_SIGNING_SECRET: SIGNING,
      REDIS_URL: 'redis://:hunter2hunter2@127.0.0.1:6379',
    },
    cwd: '/tmp',
  });

  it('never writes a configured secret, wherever it appears in the line', () => {
    const { lines, stream } = collector();
    const log = componentLogger(
      createLogger({ secrets: secretsOf(config), destination: stream }),
      'telegram',
    );
    log.info(`calling https://api.telegram.org/bot${TOKEN}/getMe`);
    log.info({ headers: { authorization: 'Bearer xoxb-slack-bot-token' } }, 'slack call');
    log.error(new Error(`boom with ${SIGNING} inside`), 'failed');
    log.warn({ url: config.redisUrl }, 'redis');
    const out = lines.join('');
    expect(lines).toHaveLength(4);
    for (const s of secretsOf(config)) {
      expect(out).not.toContain(s);
      expect(out).not.toContain(JSON.stringify(s).slice(1, -1));
    }
    expect(out).toContain('[REDACTED]');
    expect(JSON.parse(lines[0]!).component).toBe('telegram');
  });

  it('masks secrets in readable (TTY) output too', () => {
    const { lines, stream } = collector();
    const log = createLogger({ secrets: [TOKEN], destination: stream, pretty: true });
    log.info(`token is ${TOKEN}`);
    expect(lines.join('')).toContain('token is [REDACTED]');
    expect(lines.join('')).not.toContain(TOKEN);
  });
});

describe('redaction of token pieces', () => {
  const DISCORD = 'MTIzNDU2Nzg5MDEyMzQ1Njc4.GhJkLmNo.Zx9-Qw8_Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc';

  it('masks each dot-separated segment of 8+ characters, as SDKs log "censored" tokens', () => {
    const { lines, stream } = collector();
    const log = createLogger({ level: 'debug', secrets: [DISCORD], destination: stream });
    // discord.js at debug: every segment but the last, the last replaced by stars.
    log.debug({ message: 'Provided token: MTIzNDU2Nzg5MDEyMzQ1Njc4.GhJkLmNo.*****' }, 'discord.js');
    log.info('signature alone: Zx9-Qw8_Er7Ty6Ui5Op4As3Df2Gh1Jk0LzXc');
    const out = lines.join('');
    for (const segment of DISCORD.split('.')) expect(out).not.toContain(segment);
    expect(out).toContain('Provided token: [REDACTED].[REDACTED].*****');
  });

  it('leaves short segments and the host names of URLs alone', () => {
    const { lines, stream } = collector();
    const log = createLogger({
      secrets: ['abc.defghijkl', 'redis://:pw-pw-pw-pw@cache.example.com:6379'],
      destination: stream,
    });
    log.info('abc and cache.example.com stay; defghijkl does not');
    expect(lines.join('')).toContain('abc and cache.example.com stay; [REDACTED] does not');
  });
});
