/**
 * The fake Slack's own protocol for what Slack refuses on its own, spoken to with plain fetch and
 * a bare HTTP server as the app: `msg_too_long`, `cant_update_message`, trigger ids that expire
 * after 3 s, response_urls that take 5 posts within 30 minutes, and the 3 s ack deadline with the
 * Events API's retries (X-Slack-Retry-Num / X-Slack-Retry-Reason). Time moves on the fake's clock.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlack } from './slack.ts';

let fake: FakeSlack;

beforeEach(async () => {
  fake = await FakeSlack.start();
});

afterEach(async () => {
  await fake.close();
});

const call = async (method: string, body: Record<string, unknown>) => {
  const res = await fetch(`${fake.origin}/api/${method}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json; charset=utf-8',
      authorization: `Bearer ${fake.botToken}`,
    },
    body: JSON.stringify(body),
  });
  return (await res.json()) as { ok: boolean; error?: string; ts?: string };
};

const ALICE = { id: 'U0ALICE', name: 'alice' };

describe('FakeSlack message limits', () => {
  it('answers msg_too_long past 40 000 characters of text, for posts, updates and ephemerals', async () => {
    expect((await call('chat.postMessage', { channel: 'C1', text: 'x'.repeat(40_000) })).ok).toBe(
      true,
    );
    const long = 'x'.repeat(40_001);
    expect(await call('chat.postMessage', { channel: 'C1', text: long })).toEqual({
      ok: false,
      error: 'msg_too_long',
    });
    const posted = await call('chat.postMessage', { channel: 'C1', text: 'hi' });
    expect((await call('chat.update', { channel: 'C1', ts: posted.ts, text: long })).error).toBe(
      'msg_too_long',
    );
    expect(
      (await call('chat.postEphemeral', { channel: 'C1', user: 'U1', text: long })).error,
    ).toBe('msg_too_long');
    expect(fake.message('C1', posted.ts!)!.text).toBe('hi');
  });

  it('answers msg_blocks_too_long past 12 000 characters of text in the blocks together', async () => {
    const section = (n: number) => ({
      type: 'section',
      text: { type: 'mrkdwn', text: 'x'.repeat(n) },
    });
    const blocks = (n: number) => [
      section(3000),
      section(3000),
      section(3000),
      section(3000),
      section(n),
    ];
    expect(
      (await call('chat.postMessage', { channel: 'C1', blocks: blocks(3000).slice(0, 4) })).ok,
    ).toBe(true);
    expect(await call('chat.postMessage', { channel: 'C1', blocks: blocks(1) })).toEqual({
      ok: false,
      error: 'msg_blocks_too_long',
    });
  });

  it('answers cant_update_message for a person’s message and past the edit window', async () => {
    const theirs = fake.api.postAsUser('C1', ALICE.id, 'my message');
    expect(await call('chat.update', { channel: 'C1', ts: theirs, text: 'x' })).toEqual({
      ok: false,
      error: 'cant_update_message',
    });
    const ours = await call('chat.postMessage', { channel: 'C1', text: 'status' });
    fake.api.editWindowMs = 60_000;
    expect((await call('chat.update', { channel: 'C1', ts: ours.ts, text: 'v2' })).ok).toBe(true);
    fake.clock.advance(60_001);
    expect((await call('chat.update', { channel: 'C1', ts: ours.ts, text: 'v3' })).error).toBe(
      'cant_update_message',
    );
    expect(fake.message('C1', ours.ts!)).toMatchObject({ text: 'v2', edits: 1 });
  });

  it('answers message_not_found for a deleted message', async () => {
    const ours = await call('chat.postMessage', { channel: 'C1', text: 'status' });
    await call('chat.delete', { channel: 'C1', ts: ours.ts });
    expect((await call('chat.update', { channel: 'C1', ts: ours.ts, text: 'x' })).error).toBe(
      'message_not_found',
    );
  });
});

const VIEW = { type: 'modal', title: { type: 'plain_text', text: 'R' }, blocks: [] };

describe('FakeSlack trigger ids', () => {
  it('open one modal within 3 s; expired_trigger_id after, invalid_trigger_id when reused', async () => {
    const fresh = fake.api.issueTrigger();
    // Inside the 3 s with room to spare: the fake clock is real time plus what the test adds.
    fake.clock.advance(1_500);
    expect((await call('views.open', { trigger_id: fresh, view: VIEW })).ok).toBe(true);
    expect((await call('views.open', { trigger_id: fresh, view: VIEW })).error).toBe(
      'invalid_trigger_id',
    );
    const stale = fake.api.issueTrigger();
    fake.clock.advance(3_001);
    expect((await call('views.open', { trigger_id: stale, view: VIEW })).error).toBe(
      'expired_trigger_id',
    );
    expect(fake.views).toHaveLength(1);
  });
});

describe('FakeSlack response_urls', () => {
  const post = (id: string) =>
    fetch(`${fake.origin}/response/${id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'hi' }),
    }).then(async (r) => ({ status: r.status, body: await r.text() }));

  it('take 5 posts, then answer 404 expired_url', async () => {
    fake.api.interactions.issueResponseUrl('a1');
    for (let i = 0; i < 5; i++) expect((await post('a1')).status).toBe(200);
    expect(await post('a1')).toEqual({ status: 404, body: '{"ok":false,"error":"expired_url"}' });
    expect(fake.responses).toHaveLength(5);
    expect(fake.refusedResponses).toEqual([expect.objectContaining({ id: 'a1', status: 404 })]);
  });

  it('expire 30 minutes after they were issued', async () => {
    fake.api.interactions.issueResponseUrl('a2');
    fake.clock.advance(29 * 60_000);
    expect((await post('a2')).status).toBe(200);
    fake.clock.advance(60_001);
    expect((await post('a2')).status).toBe(404);
    expect((await post('never-issued')).status).toBe(404);
  });
});

/** The app: a bare server recording each request's retry headers; `answer` decides the reply. */
interface App {
  readonly seen: { retryNum?: string; retryReason?: string; body: string }[];
  answer: (req: IncomingMessage, res: ServerResponse) => void;
  close(): Promise<void>;
}

async function startApp(): Promise<App> {
  const app: App = {
    seen: [],
    answer: (_req, res) => res.writeHead(200).end(),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const h = (n: string) => req.headers[n] as string | undefined;
    app.seen.push({
      ...(h('x-slack-retry-num') !== undefined && { retryNum: h('x-slack-retry-num') }),
      ...(h('x-slack-retry-reason') !== undefined && { retryReason: h('x-slack-retry-reason') }),
      body,
    });
    app.answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/slack/events`;
  return app;
}

describe('FakeSlack ack deadline', () => {
  let app: App;
  beforeEach(async () => {
    app = await startApp();
  });
  afterEach(async () => {
    await app.close();
  });

  it('re-POSTs an event not acknowledged within 3 s, once, marked http_timeout', async () => {
    const held: ServerResponse[] = [];
    app.answer = (_req, res) => {
      if (app.seen.length === 1) held.push(res);
      else res.writeHead(200).end();
    };
    const first = fake.sendMention({ user: ALICE, channel: 'C1', text: 'status' });
    await until(() => app.seen.length === 1);
    fake.clock.advance(3_001);
    await until(() => app.seen.length === 2);
    expect(app.seen[1]).toMatchObject({ retryNum: '1', retryReason: 'http_timeout' });
    expect(app.seen[1]!.body).toBe(app.seen[0]!.body);
    // The late answer to the first POST changes nothing: Slack gave up on it.
    held[0]!.writeHead(200).end();
    const delivery = await first;
    const attempts = await fake.waitForAttempts(delivery.request, 2);
    expect(attempts.map((a) => [a.retryNum, a.timedOut, a.status])).toEqual([
      [0, true, 200],
      [1, false, 200],
    ]);
    fake.clock.advance(10 * 60_000);
    expect(app.seen).toHaveLength(2);
  });

  it('retries an event answered with an error at once, after 1 and 5 minutes, then stops', async () => {
    app.answer = (_req, res) => res.writeHead(500).end();
    const delivery = await fake.sendMention({ user: ALICE, channel: 'C1', text: 'status' });
    // Each retry is scheduled when Slack got the previous answer: wait for it, then move time.
    await fake.waitForAttempts(delivery.request, 2);
    expect(app.seen[1]).toMatchObject({ retryNum: '1', retryReason: 'http_error' });
    fake.clock.advance(59_000);
    expect(app.seen).toHaveLength(2);
    fake.clock.advance(1_001);
    await fake.waitForAttempts(delivery.request, 3);
    fake.clock.advance(5 * 60_000);
    await fake.waitForAttempts(delivery.request, 4);
    expect(app.seen.map((s) => s.retryNum)).toEqual([undefined, '1', '2', '3']);
    fake.clock.advance(60 * 60_000);
    expect(app.seen).toHaveLength(4);
  });

  it('does not retry a slash command; the attempt is recorded as timed out', async () => {
    const held: ServerResponse[] = [];
    app.answer = (_req, res) => held.push(res);
    const first = fake.sendCommand({ user: ALICE, channel: 'C1', text: 'status' });
    await until(() => app.seen.length === 1);
    fake.clock.advance(3_001);
    held[0]!.writeHead(200).end();
    const delivery = await first;
    expect(fake.attemptsOf(delivery)).toEqual([expect.objectContaining({ timedOut: true })]);
    expect(app.seen).toHaveLength(1);
  });
});

/** Polls a condition the app server changes (its requests arrive on their own). */
async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((resolve) => setImmediate(resolve));
}
