/**
 * The Slack channel in HTTP mode: real Bolt and WebClient against the fake Slack, requests signed
 * and posted to the adapter's node:http handler as Slack would.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ButtonPress, Command, Reply } from '../../../src/bridges/events.ts';
import { bold, code, rich } from '../../../src/bridges/render-text.ts';
import { SlackChannel } from '../../../src/bridges/slack/index.ts';
import {
  ConfigError,
  NotFoundError,
  PlatformError,
  RateLimitedError,
} from '../../../src/errors.ts';
import { ALICE, BOB, type Harness, OPS, startHttpHarness, testOptions, tsOf } from './support.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHttpHarness();
});

afterEach(async () => {
  await h.close();
});

const CHAT = 'slack:T0FAKE01:C0OPS';

describe('SlackChannel inbound (HTTP mode)', () => {
  it('turns `/pb run demo add login` into a Command, acking with an empty 200', async () => {
    const delivery = await h.fake.sendCommand({
      user: ALICE,
      channel: OPS,
      text: 'run demo add login',
    });
    expect(delivery).toMatchObject({ status: 200, body: '' });
    const event = (await h.inbox.next()) as Command;
    expect(event).toMatchObject({
      kind: 'command',
      name: 'run',
      args: ['demo', 'add', 'login'],
      rawText: 'run demo add login',
      chatRef: CHAT,
      user: { platform: 'slack', id: 'U0ALICE', display: '@alice' },
    });
    expect(event.idempotencyKey).toMatch(/^slack:trigger:[0-9a-f]{32}$/);
    expect(h.fake.okCalls('auth.test').length).toBeGreaterThanOrEqual(1);
  });

  it('answers another slash command of the app without emitting anything', async () => {
    const delivery = await h.fake.sendCommand({
      user: ALICE,
      channel: OPS,
      text: 'x',
      command: '/other',
    });
    expect(delivery).toMatchObject({ status: 200, body: 'This app answers /pb only.' });
    await h.fake.sendCommand({ user: ALICE, channel: OPS, text: 'status' });
    expect(((await h.inbox.next()) as Command).name).toBe('status');
  });

  it('turns `@phasebridge run …` into a Command, in the mention’s thread', async () => {
    await h.fake.sendMention({ user: BOB, channel: OPS, text: 'Run demo  "add login"' });
    const top = (await h.inbox.next()) as Command;
    expect(top).toMatchObject({ kind: 'command', name: 'run', args: ['demo', '"add', 'login"'] });
    expect(top.chatRef).toBe(CHAT);
    expect(top.idempotencyKey).toMatch(/^slack:event:Ev0\d+$/);

    await h.fake.sendMention({
      user: BOB,
      channel: OPS,
      text: 'status',
      threadTs: '1700000000.000100',
    });
    const threaded = (await h.inbox.next()) as Command;
    expect(threaded).toMatchObject({
      name: 'status',
      chatRef: `${CHAT}:1700000000.000100`,
      threadRef: '1700000000.000100',
      user: { id: 'U0BOB' },
    });
  });

  it('acks before the handler runs; a failing handler is logged, auth.test is not repeated', async () => {
    h.react = async () => {
      throw new Error('boom');
    };
    const delivery = await h.fake.sendCommand({ user: ALICE, channel: OPS, text: 'status' });
    expect(delivery.status).toBe(200);
    await expect
      .poll(() => h.logger.lines.filter((l) => l.msg === 'slack: handler failed'))
      .toHaveLength(1);
    await h.fake.sendMention({ user: ALICE, channel: OPS, text: 'status' });
    await expect.poll(() => h.logger.lines.filter((l) => l.level === 'error')).toHaveLength(2);
    // One auth.test by start(), one by Bolt's init; none per event.
    expect(h.fake.okCalls('auth.test')).toHaveLength(2);
  });

  it('gives a retried delivery (X-Slack-Retry-Num) the same idempotency key', async () => {
    const first = await h.fake.sendCommand({ user: ALICE, channel: OPS, text: 'cancel r1' });
    const retry = await h.fake.deliver(first.request, 1);
    expect(retry.status).toBe(200);
    const a = await h.inbox.next();
    const b = await h.inbox.next();
    expect(b.idempotencyKey).toBe(a.idempotencyKey);

    const mention = await h.fake.sendMention({ user: ALICE, channel: OPS, text: 'status' });
    await h.fake.deliver(mention.request, 2);
    const m1 = await h.inbox.next();
    const m2 = await h.inbox.next();
    expect(m2.idempotencyKey).toBe(m1.idempotencyKey);
  });
});

describe('SlackChannel outbound', () => {
  const checkpoint = {
    text: rich(bold('Checkpoint'), ' on step ', code('build'), ': <!channel> & co'),
    fields: [{ label: 'Run', value: '2026-11-29T143000Z-add-login' }],
    buttons: [
      { id: 'tok-approve', label: 'Approve', style: 'primary' as const },
      { id: 'tok-reject', label: 'Reject', style: 'danger' as const },
    ],
  };

  it('sends Block Kit with buttons and edits it in place with chat.update, keeping the ts', async () => {
    const ref = await h.channel.send(CHAT, checkpoint);
    const [ts] = tsOf(ref);
    const sent = h.fake.message(OPS, ts!)!;
    expect(sent.blocks[0]).toEqual({
      type: 'section',
      text: { type: 'mrkdwn', text: '*Checkpoint* on step `build`: &lt;!channel&gt; &amp; co' },
    });
    expect(sent.blocks[1]!.fields[0].text).toBe('*Run*\n2026-11-29T143000Z-add-login');
    expect(sent.blocks[2]).toMatchObject({
      type: 'actions',
      elements: [
        { type: 'button', action_id: 'tok-approve', style: 'primary', text: { text: 'Approve' } },
        { type: 'button', action_id: 'tok-reject', style: 'danger', text: { text: 'Reject' } },
      ],
    });
    expect(sent.threadTs).toBeUndefined();

    await h.channel.edit(ref, { text: rich('Approved by ', bold('@alice')) });
    const [update] = h.fake.okCalls('chat.update');
    expect(update!.params).toMatchObject({ channel: OPS, ts });
    expect(sent.edits).toBe(1);
    expect(sent.blocks.map((b) => b.type)).toEqual(['section']);
    expect(h.fake.messages.get(OPS)).toHaveLength(1);
  });

  it('posts into a thread (from the chat ref or the message) with thread_ts', async () => {
    const ref = await h.channel.send(`${CHAT}:1700000000.000100`, { text: rich('in thread') });
    expect(ref.startsWith(`${CHAT}:1700000000.000100/`)).toBe(true);
    const viaMessage = await h.channel.send(CHAT, {
      text: rich('also'),
      thread: '1700000000.000200',
    });
    const calls = h.fake.okCalls('chat.postMessage').map((c) => c.params.thread_ts);
    expect(calls).toEqual(['1700000000.000100', '1700000000.000200']);
    expect(h.fake.message(OPS, tsOf(viaMessage)[0]!)!.threadTs).toBe('1700000000.000200');
  });

  it('splits long text over several messages and deletes parts an edit no longer needs', async () => {
    const long = `${'word '.repeat(2000)}end`;
    const ref = await h.channel.send(CHAT, {
      text: rich(long),
      buttons: [{ id: 't1', label: 'Go' }],
    });
    const parts = tsOf(ref);
    expect(parts).toHaveLength(2);
    const last = h.fake.message(OPS, parts[1]!)!;
    expect(last.blocks.at(-1)!.type).toBe('actions');
    await h.channel.edit(ref, { text: rich('short now') });
    expect(h.fake.message(OPS, parts[0]!)!.edits).toBe(1);
    expect(h.fake.message(OPS, parts[1]!)!.deleted).toBe(true);
  });

  it('waits out a 429 (Retry-After) and keeps going; past the policy it is RATE_LIMITED', async () => {
    h.fake.rateLimitNext('chat.postMessage', 0);
    await h.channel.send(CHAT, { text: rich('after a wait') });
    expect(h.fake.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.ok)).toEqual([
      false,
      true,
    ]);
    h.fake.rateLimitNext('chat.postMessage', 30);
    const err = await h.channel.send(CHAT, { text: rich('x') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBe(30_000);
  });

  it('reports Slack errors as PLATFORM errors naming the method and code', async () => {
    h.fake.failNext('chat.update', 'invalid_blocks');
    const err = await h.channel
      .edit(`${CHAT}/1700000000.000001`, { text: rich('x') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as Error).message).toBe('slack: chat.update failed: invalid_blocks');
  });

  it('reports an edit of a deleted message as NOT_FOUND (the notifier then posts anew)', async () => {
    h.fake.failNext('chat.update', 'message_not_found');
    const err = await h.channel
      .edit(`${CHAT}/1700000000.000001`, { text: rich('x') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NotFoundError);
    expect((err as Error).message).toBe('slack: chat.update failed: message_not_found');
  });

  it('uploads a file into a thread with files.uploadV2', async () => {
    const ref = await h.channel.sendFile(`${CHAT}:1700000000.000100`, {
      name: 'step.log',
      data: new TextEncoder().encode('line 1\nline 2\n'),
      caption: rich('Log of ', code('build')),
    });
    expect(ref).toMatch(/^slack:T0FAKE01:C0OPS:1700000000\.000100\/file:F0\d+$/);
    const [complete] = h.fake.okCalls('files.completeUploadExternal');
    expect(complete!.params).toMatchObject({
      channel_id: OPS,
      thread_ts: '1700000000.000100',
      initial_comment: 'Log of `build`',
    });
    expect(h.fake.api.files[0]!.bytes).toBeGreaterThan(0);
  });
});

describe('SlackChannel buttons and modals', () => {
  it('delivers a press as a ButtonPress and answers privately with an ephemeral', async () => {
    const ref = await h.channel.send(CHAT, {
      text: rich('Checkpoint'),
      buttons: [{ id: 'opaque-token-1', label: 'Approve' }],
    });
    h.react = async (event) => {
      if (event.kind === 'button') {
        await h.channel.answer(event.interaction, 'Only approvers can approve.', { private: true });
      }
    };
    const delivery = await h.fake.pressButton({
      user: BOB,
      channel: OPS,
      ts: tsOf(ref)[0]!,
      label: 'Approve',
    });
    expect(delivery.status).toBe(200);
    const press = (await h.inbox.next()) as ButtonPress;
    expect(press).toMatchObject({
      kind: 'button',
      token: 'opaque-token-1',
      chatRef: CHAT,
      messageRef: ref,
      user: { platform: 'slack', id: 'U0BOB', display: '@bob' },
    });
    expect(press.idempotencyKey).toMatch(/^slack:trigger:/);
    expect(h.fake.ephemerals).toEqual([
      expect.objectContaining({ channel: OPS, user: 'U0BOB', text: 'Only approvers can approve.' }),
    ]);
    expect(h.fake.okCalls('chat.postMessage')).toHaveLength(1);
  });

  it('falls back to the response_url when the bot may not post an ephemeral there', async () => {
    const ref = await h.channel.send(CHAT, {
      text: rich('c'),
      buttons: [{ id: 'k', label: 'Go' }],
    });
    h.fake.failNext('chat.postEphemeral', 'not_in_channel');
    h.react = async (event) => {
      if (event.kind === 'button')
        await h.channel.answer(event.interaction, 'No <b>', { private: true });
    };
    await h.fake.pressButton({ user: BOB, channel: OPS, ts: tsOf(ref)[0]!, label: 'Go' });
    await h.inbox.next();
    const [response] = await h.fake.waitForResponses(1);
    expect(response!.body).toEqual({
      response_type: 'ephemeral',
      replace_original: false,
      text: 'No &lt;b&gt;',
    });
  });

  it('answers publicly in the pressed message’s thread', async () => {
    const ref = await h.channel.send(`${CHAT}:1700000000.000100`, {
      text: rich('c'),
      buttons: [{ id: 'k', label: 'Go' }],
    });
    h.react = async (event) => {
      if (event.kind === 'button')
        await h.channel.answer(event.interaction, 'Approved.', { private: false });
    };
    await h.fake.pressButton({ user: BOB, channel: OPS, ts: tsOf(ref)[0]!, label: 'Go' });
    const press = (await h.inbox.next()) as ButtonPress;
    expect(press.threadRef).toBe('1700000000.000100');
    const answer = h.fake.okCalls('chat.postMessage').at(-1)!;
    expect(answer.params).toMatchObject({
      channel: OPS,
      text: 'Approved.',
      thread_ts: '1700000000.000100',
    });
  });

  it('Reject → askForReason opens a modal with the trigger_id; its submission is a Reply', async () => {
    const ref = await h.channel.send(CHAT, {
      text: rich('Checkpoint'),
      buttons: [{ id: 'tok-reject', label: 'Reject', style: 'danger' }],
    });
    let promptRef = '';
    h.react = async (event) => {
      if (event.kind === 'button')
        promptRef = await h.channel.askForReason(event.interaction, 'Why reject?');
    };
    const press = await h.fake.pressButton({
      user: ALICE,
      channel: OPS,
      ts: tsOf(ref)[0]!,
      label: 'Reject',
    });
    await h.inbox.next();
    const [open] = h.fake.okCalls('views.open');
    expect(open!.params.trigger_id).toBe(press.request.payload.trigger_id);
    const view = h.fake.views[0]!;
    expect(view.view).toMatchObject({ type: 'modal', title: { text: 'Reason' } });
    expect(JSON.stringify(view.view.blocks)).toContain('Why reject?');
    expect(promptRef).toBe(`${CHAT}/view:${view.id}`);

    const submitted = await h.fake.submitView({
      user: ALICE,
      viewId: view.id,
      value: 'tests are red',
    });
    expect(submitted).toMatchObject({ status: 200, body: '' });
    const reply = (await h.inbox.next()) as Reply;
    expect(reply).toMatchObject({
      kind: 'reply',
      text: 'tests are red',
      replyToMessageRef: promptRef,
      chatRef: CHAT,
      user: { id: 'U0ALICE' },
    });
    expect(reply.idempotencyKey).toMatch(/^slack:trigger:/);
    await expect(h.channel.edit(promptRef, { text: rich('x') })).rejects.toThrow(/not an editable/);
  });
});

describe('SlackChannel lifecycle', () => {
  it('refuses invalid options, listing every problem', () => {
    let err: unknown;
    try {
      new SlackChannel({ botToken: 'nope', command: 'pb' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).problems.map((p) => p.path)).toEqual([
      'slack.botToken',
      'slack.signingSecret',
      'slack.command',
    ]);
  });

  it('fails to start with a token Slack refuses, and can start again later', async () => {
    const channel = new SlackChannel({ ...testOptions(h.fake, h.logger), botToken: 'xoxb-wrong' });
    const err = await channel.start(async () => {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PlatformError);
    expect((err as Error).message).toBe('slack: auth.test failed: invalid_auth');
    await expect(channel.start(async () => {})).rejects.toThrow(/invalid_auth/);
  });

  it('stop() waits for the event being handled', async () => {
    let release: () => void = () => {};
    const handled: string[] = [];
    h.react = (event) =>
      new Promise<void>((resolve) => {
        release = () => {
          handled.push(event.kind);
          resolve();
        };
      });
    await h.fake.sendCommand({ user: ALICE, channel: OPS, text: 'status' });
    const stopped = h.channel.stop().then(() => handled.length);
    await new Promise((r) => setImmediate(r));
    release();
    expect(await stopped).toBe(1);
  });
});
