/**
 * What only one platform has, through the whole bridge: Slack's request signatures on the
 * bridge's /slack/ route (with Slack's documented example), Discord's gateway resume in the
 * middle of a run, Telegram's webhook secret in webhook mode, and Slack's edited mention command.
 */
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { sign } from '../fakes/slack.ts';
import { DiscordDriver } from './drivers/discord.ts';
import { OPS, SlackDriver } from './drivers/slack.ts';
import { TEAM, TelegramDriver } from './drivers/telegram.ts';
import { checkpointButtonsOn, until } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** Proves a refused request left no trace: no run, no audit entry, no message in the chat. */
async function expectNothingHappened(world: World, messages: () => number): Promise<void> {
  expect(await world.bridge.orchestrator.listRuns()).toEqual([]);
  expect(await world.bridge.repos.audit.listRecent()).toEqual([]);
  expect(messages()).toBe(0);
}

describe('Slack request verification on the bridge’s /slack/ route', () => {
  const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
  const runBody = new URLSearchParams({
    team_id: 'T0FAKE01',
    channel_id: OPS,
    user_id: 'U0ALICE',
    user_name: 'alice',
    command: '/pb',
    text: 'run demo add login',
    trigger_id: 'trig-forged',
    response_url: 'https://hooks.slack.com/commands/x',
  }).toString();

  it('answers 401 to a bad signature, old or future timestamps and missing headers; nothing happens', async () => {
    const d = await SlackDriver.start();
    w = await World.create([d]);
    const nowSec = Math.floor(Date.now() / 1000);
    const signed = d.fake.signedHeaders(runBody);
    const cases: Record<string, Record<string, string>> = {
      'bad signature': { ...signed, 'x-slack-signature': `v0=${'0'.repeat(64)}` },
      'signature of another body': d.fake.signedHeaders(`${runBody}&tampered=1`),
      'timestamp 301 s old': d.fake.signedHeaders(runBody, nowSec - 301),
      'timestamp 10 min ahead': d.fake.signedHeaders(runBody, nowSec + 600),
      'no signature header': { 'x-slack-request-timestamp': String(nowSec) },
      'no timestamp header': { 'x-slack-signature': signed['x-slack-signature']! },
      'no headers': {},
    };
    for (const [name, headers] of Object.entries(cases)) {
      const res = await d.fake.postRaw(runBody, { ...FORM, ...headers });
      expect([name, res.status]).toEqual([name, 401]);
    }
    await expectNothingHappened(w, () => d.latestMessages().length);
    // The same route takes a properly signed request.
    await d.sendCommand('alice', 'runs');
    await w.message(d, /^No runs here yet\.$/);
  });

  it('takes Slack’s documented example request signed now, and refuses it as a replay at its own time', async () => {
    // From Slack's "Verifying requests from Slack" (see test/bridges/slack/verify.test.ts).
    const secret = '8f742231b10e8888abcd99yyyzzz85a5';
    const timestamp = '1531420618';
    const body =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';
    // The fake's signer is independent of the bridge's verifier and matches the documentation.
    expect(sign(secret, timestamp, body)).toBe(signature);
    const d = await SlackDriver.start();
    w = await World.create([d], {
      env: { SLACK_SIGNING_SECRET: secret, SLACK_COMMAND: '/webhook-collect' },
    });
    const posted = () => d.fake.messages.get('G8PSS9T3V') ?? [];

    // The documented request as it was sent in 2018: a replay today.
    const old = { 'x-slack-request-timestamp': timestamp, 'x-slack-signature': signature };
    expect((await d.fake.postRaw(body, { ...FORM, ...old })).status).toBe(401);
    const now = String(Math.floor(Date.now() / 1000));
    const fresh = {
      'x-slack-request-timestamp': now,
      'x-slack-signature': sign(secret, now, body),
    };
    const tampered = await d.fake.postRaw(body.replace('text=', 'text=run'), { ...FORM, ...fresh });
    expect(tampered.status).toBe(401);
    expect(posted()).toEqual([]);
    expect((await d.fake.postRaw(body, { ...FORM, ...fresh })).status).toBe(200);
    // An empty command text asks for help, answered even in a chat that is not bound.
    await until(() => posted().length > 0, 'the help answer');
    expect(posted()[0]!.text).toMatch(/^Commands \(each role[^\n]*\n\nAnyone:\n/);
  });
});

describe('Discord gateway', () => {
  it('resumes after the socket drops mid-run; the press after the resume works', async () => {
    const d = await DiscordDriver.start();
    w = await World.create([d]);
    await d.sendCommand('alice', 'run demo add login');
    const status = await w.message(d, /^Run \S+ · Demo/);
    d.fake.dropGateway();
    // The run goes on meanwhile (REST is not the gateway): its checkpoint arrives.
    const plan = await w.message(d, /Checkpoint plan:1/);
    expect(runIdOf(plan)).toBe(runIdOf(status));
    await until(() => d.fake.gateway.resumes === 1 && d.fake.gateway.connected, 'the resume');
    expect(d.fake.gateway.identifies).toBe(1);

    const approve = await d.press('bob', plan, 'Approve');
    expect(await d.answerTo(approve)).toBe('Approved — 1 of 1 approval; the run moves on');
    await w.settles(d, plan, (m) => /Approved by Bob at/.test(m.text), 'the decision');
    expect((await w.message(d, /Checkpoint review:1/)).buttons).toEqual(checkpointButtonsOn(d));
  });
});

describe('Telegram webhook mode', () => {
  const SECRET = 'wh-secret_0123456789';

  async function webhookWorld(d: TelegramDriver): Promise<World> {
    const port = await freePort();
    return World.create([d], {
      port,
      env: {
        TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram/webhook`,
        TELEGRAM_WEBHOOK_SECRET: SECRET,
      },
    });
  }

  it('answers 401 to a wrong or missing secret and nothing happens; the real delivery works', async () => {
    const d = await TelegramDriver.start();
    w = await webhookWorld(d);
    expect(d.fake.webhook.secret).toBe(SECRET);
    const forged = {
      update_id: 1,
      message: {
        message_id: 1,
        date: Math.floor(Date.now() / 1000),
        chat: TEAM,
        from: d.user('alice'),
        text: '/run demo add login',
        entities: [{ type: 'bot_command', offset: 0, length: 4 }],
      },
    };
    const attempts: Record<string, string>[] = [
      {},
      { 'x-telegram-bot-api-secret-token': 'wrong-secret' },
    ];
    for (const headers of attempts) {
      const res = await fetch(d.fake.webhook.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(forged),
      });
      expect(res.status).toBe(401);
    }
    await expectNothingHappened(w, () => d.latestMessages().length);

    await d.sendCommand('alice', 'run demo add login');
    const plan = await w.message(d, /Checkpoint plan:1/);
    expect(await d.answerTo(await d.press('bob', plan, 'Approve'))).toMatch(/^Approved/);
    expect(new Set(await d.fake.webhookStatuses())).toEqual(new Set([200]));
    expect(d.fake.calls.some((c) => c.method === 'getUpdates')).toBe(false);
  });
});

describe('Slack: an edited `@phasebridge run`', () => {
  it('is answered, and starts no second run', async () => {
    // A slash command cannot be edited; a command written as a mention can (words-stories.ts
    // covers Telegram's edited /run the same way).
    const d = await SlackDriver.start();
    w = await World.create([d]);
    const sent = await d.fake.sendMention({
      user: d.user('alice'),
      channel: OPS,
      text: 'run demo add login',
    });
    expect(sent.status).toBe(200);
    const ts = String((sent.request.payload.event as { ts?: unknown }).ts);
    const plan = await w.message(d, /Checkpoint plan:1/);
    const bot = d.fake.workspace.botUserId;
    const edit = await d.fake.editMessage({
      user: d.user('alice'),
      channel: OPS,
      ts,
      text: `<@${bot}> run demo add logout`,
    });
    expect(edit.status).toBe(200);
    await w.message(
      d,
      /^Edits are not applied: a command is read once, as first sent, so no second run was started\. To start a run with the new words, send \/pb run again as a new message\.$/,
    );
    const runs = await w.bridge.orchestrator.listRuns({});
    expect(runs.map((r) => r.id)).toEqual([runIdOf(plan)]);
  });
});

/** A port nothing listens on right now (a webhook URL must name the port before start). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
