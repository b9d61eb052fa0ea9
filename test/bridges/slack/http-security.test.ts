/**
 * Request verification of the Slack channel's HTTP handler: every request must be signed by the
 * signing secret AND stamped within ±5 minutes of now; anything else gets 401 and never reaches
 * Bolt or the handler. Includes the worked example of Slack's "Verifying requests" page.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import { ALICE, type Harness, OPS, startHttpHarness } from './support.ts';

let h: Harness | undefined;

afterEach(async () => {
  await h?.close();
  h = undefined;
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const commandBody = (text: string) =>
  new URLSearchParams({
    team_id: 'T0FAKE01',
    channel_id: OPS,
    user_id: ALICE.id,
    user_name: ALICE.name,
    command: '/pb',
    text,
    trigger_id: `trig-${text}`,
    response_url: 'https://hooks.slack.com/commands/x',
  }).toString();

/** Proves that nothing was handled: the next valid command is the first event to arrive. */
async function expectNothingHandled(harness: Harness): Promise<void> {
  await harness.fake.sendCommand({ user: ALICE, channel: OPS, text: 'whoami' });
  const first = (await harness.inbox.next()) as Command;
  expect(first.name).toBe('whoami');
  expect(harness.inbox.all).toHaveLength(1);
}

describe('Slack HTTP request verification', () => {
  it('refuses a bad signature, a stale or future timestamp and missing headers with 401', async () => {
    h = await startHttpHarness();
    const fake = h.fake;
    const body = commandBody('run demo');
    const nowSec = Math.floor(Date.now() / 1000);
    const cases: Record<string, Record<string, string>> = {
      'bad signature': {
        ...fake.signedHeaders(body),
        'x-slack-signature': `v0=${'0'.repeat(64)}`,
      },
      'signed with another secret': {
        ...fake.signedHeaders(`${body}&tampered=1`),
      },
      'timestamp 301 s old': fake.signedHeaders(body, nowSec - 301),
      'timestamp 10 min in the future': fake.signedHeaders(body, nowSec + 600),
      'no signature header': { 'x-slack-request-timestamp': String(nowSec) },
      'no timestamp header': {
        'x-slack-signature': fake.signedHeaders(body)['x-slack-signature']!,
      },
      'no headers': {},
    };
    for (const [name, headers] of Object.entries(cases)) {
      const res = await fake.postRaw(body, { ...FORM, ...headers });
      expect([name, res.status]).toEqual([name, 401]);
    }
    // A signed url_verification is answered; an unsigned one is not.
    const challenge = JSON.stringify({ type: 'url_verification', challenge: 'c-123' });
    const json = { 'content-type': 'application/json' };
    expect(await fake.postRaw(challenge, { ...json, ...fake.signedHeaders(challenge) })).toEqual({
      status: 200,
      body: '{"challenge":"c-123"}',
    });
    expect((await fake.postRaw(challenge, json)).status).toBe(401);
    expect(
      h.logger.lines.filter((l) => l.msg === 'slack: refused an unverified request'),
    ).toHaveLength(8);
    await expectNothingHandled(h);
  });

  it('accepts a timestamp 298 s old or ahead', async () => {
    h = await startHttpHarness();
    for (const offset of [-298, 298]) {
      // Rounded so the skew the bridge sees is at most 298 s plus the request's own travel time
      // (a whole-second timestamp taken once was up to 1 s older than it looked: 401 under load).
      const now = Date.now() / 1000;
      const ts = offset < 0 ? Math.ceil(now) + offset : Math.floor(now) + offset;
      const body = commandBody(`status-${ts}`);
      const res = await h.fake.postRaw(body, { ...FORM, ...h.fake.signedHeaders(body, ts) });
      expect(res.status).toBe(200);
    }
    expect(((await h.inbox.next()) as Command).name).toMatch(/^status-/);
  });

  it('answers 405 to other methods and 400 to an unreadable signed body', async () => {
    h = await startHttpHarness();
    const res = await fetch(h.fake.target!, { method: 'GET' });
    expect(res.status).toBe(405);
    const junk = '{not json';
    const bad = await h.fake.postRaw(junk, {
      'content-type': 'application/json',
      ...h.fake.signedHeaders(junk),
    });
    expect(bad.status).toBe(400);
  });

  it('verifies the example request and signature of Slack’s documentation at its time', async () => {
    // From Slack's "Verifying requests from Slack" (docs.slack.dev/authentication/verifying-requests-from-slack).
    const secret = '8f742231b10e8888abcd99yyyzzz85a5';
    const timestamp = '1531420618';
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
    h = await startHttpHarness({
      signingSecret: secret,
      command: '/webhook-collect',
      now: () => Number(timestamp) * 1000 + 30_000,
    });
    const headers = {
      ...FORM,
      'x-slack-request-timestamp': timestamp,
      'x-slack-signature': signature,
    };
    expect((await h.fake.postRaw(body, headers)).status).toBe(200);
    expect(await h.inbox.next()).toMatchObject({
      kind: 'command',
      name: 'help',
      args: [],
      chatRef: 'slack:T0FAKE01:G8PSS9T3V',
      user: { id: 'U2CERLKJA', display: '@roadrunner' },
    });
    const tampered = await h.fake.postRaw(body.replace('text=', 'text=run'), headers);
    expect(tampered.status).toBe(401);
  });
});
