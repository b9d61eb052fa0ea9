/**
 * Sending and editing through real discord.js and the fake: embeds with action rows, long text
 * split over messages, edits in place, files, and rate limits (a short 429 is waited out, a long
 * one is RATE_LIMITED).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { bold, code, link, rich } from '../../../src/bridges/render-text.ts';
import { hasCode, RateLimitedError } from '../../../src/errors.ts';
import { type Harness, startHarness } from './support.ts';

let h: Harness | undefined;
afterEach(async () => {
  const problems = h?.log.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  await h?.close();
  h = undefined;
  expect(problems ?? []).toEqual([]);
});

const idOf = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1).split(',');

describe('send and edit', () => {
  it('renders an embed with fields and an action row of buttons, without pinging anyone', async () => {
    h = await startHarness();
    const ref = await h.channel.send(h.chatRef, {
      text: rich(
        bold('Run'),
        ' 2026-11-29T143000Z-add-login ',
        code('step_1'),
        ' @everyone ',
        link('logs', 'https://example.com/l'),
      ),
      fields: [{ label: 'Phase', value: 'B' }],
      buttons: [
        { id: 'a1', label: 'Approve', style: 'primary' },
        { id: 'r1', label: 'Reject', style: 'danger' },
        { id: 'l1', label: 'Loop back' },
      ],
    });
    expect(ref).toMatch(new RegExp(`^${h.chatRef}/\\d+$`));
    const [post] = h.fake.okCalls(
      'POST',
      new RegExp(`^/channels/${h.fake.state.text.id}/messages$`),
    );
    expect(post!.body).toMatchObject({
      embeds: [
        {
          description:
            '**Run** 2026-11-29T143000Z-add-login `step_1` @everyone [logs](https://example.com/l)',
          fields: [{ name: 'Phase', value: 'B', inline: true }],
        },
      ],
      components: [
        {
          type: 1,
          components: [
            { type: 2, style: 1, label: 'Approve', custom_id: 'a1' },
            { type: 2, style: 4, label: 'Reject', custom_id: 'r1' },
            { type: 2, style: 2, label: 'Loop back', custom_id: 'l1' },
          ],
        },
      ],
      allowed_mentions: { parse: [] },
    });
  });

  it('edits in place through REST and removes buttons not in the new message', async () => {
    h = await startHarness();
    const ref = await h.channel.send(h.chatRef, {
      text: rich('open'),
      buttons: [{ id: 'x', label: 'X' }],
    });
    await h.channel.edit(ref, { text: rich('decided') });
    const message = h.fake.state.messages.get(idOf(ref)[0]!);
    expect(message).toMatchObject({ embeds: [{ description: 'decided' }], components: [] });
    expect(message?.editedAt).not.toBeNull();
  });

  it('splits long text over several messages, buttons on the last, and edits every part', async () => {
    h = await startHarness();
    const long = `${'word '.repeat(1000)}\n${'more '.repeat(400)}`;
    const ref = await h.channel.send(h.chatRef, {
      text: rich(long),
      buttons: [{ id: 'b', label: 'B' }],
    });
    const ids = idOf(ref);
    expect(ids.length).toBe(2);
    const [first, second] = ids.map((id) => h!.fake.state.messages.get(id)!);
    expect(first!.components).toEqual([]);
    expect(second!.components).toHaveLength(1);
    const text = [first, second].map((m) => String(m!.embeds[0]!.description)).join('');
    expect(text).toBe(long);
    // A silent second part: only the first pings.
    const posts = h.fake.okCalls('POST', /\/messages$/);
    expect(posts.map((p) => (p.body as { flags?: number }).flags ?? 0)).toEqual([0, 4096]);

    await h.channel.edit(ref, { text: rich('short now') });
    expect(h.fake.state.messages.get(ids[0]!)?.embeds[0]?.description).toBe('short now');
    expect(h.fake.state.messages.has(ids[1]!)).toBe(false);
  });

  it('uploads a file as a multipart attachment with its caption', async () => {
    h = await startHarness();
    const ref = await h.channel.sendFile(h.chatRef, {
      name: 'step.log',
      data: new TextEncoder().encode('line 1\nline 2\n'),
      caption: rich('Log of ', code('step_1')),
    });
    const [post] = h.fake.okCalls('POST', /\/messages$/);
    const bytes = Buffer.from('line 1\nline 2\n');
    expect(post!.files).toEqual([{ name: 'step.log', size: 14, data: bytes }]);
    expect(post!.body).toMatchObject({ content: 'Log of `step_1`' });
    expect(h.fake.state.messages.get(idOf(ref)[0]!)?.attachments).toEqual([
      { filename: 'step.log', size: 14, data: bytes },
    ]);
  });

  it('refuses a chat ref of another platform and a malformed message ref', async () => {
    h = await startHarness();
    await expect(h.channel.send('slack:T1:C1', { text: rich('x') })).rejects.toSatisfy((e) =>
      hasCode(e, 'INVALID_INPUT'),
    );
    await expect(h.channel.edit(`${h.chatRef}/reason:123`, { text: rich('x') })).rejects.toSatisfy(
      (e) => hasCode(e, 'INVALID_INPUT'),
    );
  });

  it('reports a failure of Discord as PLATFORM, a refusal of the channel as CHAT_UNREACHABLE', async () => {
    h = await startHarness();
    h.fake.failNext({ method: 'POST', path: /\/messages$/ }, 400, 50035, 'Invalid Form Body');
    const err = await h.channel.send(h.chatRef, { text: rich('x') }).catch((e: unknown) => e);
    expect(hasCode(err, 'PLATFORM')).toBe(true);
    expect(String((err as Error).message)).toContain('Invalid Form Body');
    h.fake.failNext({ method: 'POST', path: /\/messages$/ }, 403, 50013, 'Missing Permissions');
    const refused = await h.channel.send(h.chatRef, { text: rich('x') }).catch((e: unknown) => e);
    expect(hasCode(refused, 'CHAT_UNREACHABLE')).toBe(true);
    expect(String((refused as Error).message)).toContain('Missing Permissions');
  });
});

describe('a send repeated after a kill', () => {
  it('carries its nonce: Discord answers the resend with the first message, posting nothing', async () => {
    h = await startHarness();
    const message = {
      text: rich('✋ Checkpoint plan:1'),
      buttons: [{ id: 'a1', label: 'Approve', style: 'primary' as const }],
      nonce: 'row-nonce-1',
    };
    const first = await h.channel.send(h.chatRef, message);
    // The outbox resends the row a killed process left unanswered, with the row's nonce.
    const again = await h.channel.send(h.chatRef, message);
    expect(again).toBe(first);
    const posted = h.fake.state.channelMessages(h.fake.state.text.id);
    expect(posted.map((m) => m.id)).toEqual(idOf(first));
    // Without a nonce, two sends are two messages.
    await h.channel.send(h.chatRef, { text: rich('a') });
    await h.channel.send(h.chatRef, { text: rich('a') });
    expect(h.fake.state.channelMessages(h.fake.state.text.id)).toHaveLength(3);
  });
});

describe('rate limits', () => {
  it('waits out a 429 on a send and retries it', async () => {
    h = await startHarness();
    h.fake.rateLimitNext({ method: 'POST', path: /\/messages$/ }, 0.2);
    const ref = await h.channel.send(h.chatRef, { text: rich('after the limit') });
    const posts = h.fake.calls.filter((c) => c.method === 'POST' && c.path.endsWith('/messages'));
    expect(posts.map((c) => c.status)).toEqual([429, 200]);
    expect(h.fake.state.messages.get(idOf(ref)[0]!)?.embeds[0]?.description).toBe(
      'after the limit',
    );
  });

  it('gives up with RATE_LIMITED when Discord asks to wait longer than allowed', async () => {
    h = await startHarness({ maxRateLimitWaitMs: 1000 });
    const dm = h.fake.state.dm(h.fake.state.user('dave'));
    h.fake.rateLimitNext({ method: 'POST', path: new RegExp(`^/channels/${dm.id}/messages$`) }, 30);
    const err = await h.channel
      .send(`discord:@me:${dm.id}`, { text: rich('x') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterMs).toBeGreaterThanOrEqual(30_000);
    // Other channels are not held up.
    await h.channel.send(h.chatRef, { text: rich('elsewhere') });
  });
});
