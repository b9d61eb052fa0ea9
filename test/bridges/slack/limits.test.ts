/**
 * Slack's size limits met by the adapter (real WebClient against the fake Slack, which refuses on
 * its own with `msg_blocks_too_long`): text that grows when escaped is split over more messages
 * rather than refused, so the reader still gets every character, once.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { rich } from '../../../src/bridges/render-text.ts';
import { plainMrkdwn } from '../../contracts/drivers/slack.ts';
import { type Harness, OPS, startHttpHarness, tsOf } from './support.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHttpHarness();
});

afterEach(async () => {
  await h.close();
});

const CHAT = 'slack:T0FAKE01:C0OPS';

describe('a message Slack would refuse as too long', () => {
  it('arrives whole over several messages, none refused', async () => {
    // Shell output is full of `&&`, `<` and `>`: each is five characters once escaped.
    const line = 'make build && ./run --in <input> --out <output> 2>&1\n';
    const text = line.repeat(Math.ceil(12_000 / line.length));
    const ref = await h.channel.send(CHAT, {
      text: rich(text),
      buttons: [{ id: 'tok', label: 'Approve' }],
    });
    const parts = tsOf(ref).map((ts) => h.fake.message(OPS, ts)!);
    expect(parts.length).toBeGreaterThan(2);
    expect(h.fake.calls.filter((c) => !c.ok)).toEqual([]);
    const shown = parts
      .map((m) =>
        m.blocks
          .filter((b) => b.type === 'section')
          .map((b) => plainMrkdwn(String(b.text.text)))
          .join(''),
      )
      .join('');
    expect(shown.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
    // The buttons come once, under the last part.
    expect(parts.map((m) => m.blocks.some((b) => b.type === 'actions'))).toEqual([
      ...parts.slice(1).map(() => false),
      true,
    ]);
  });
});

describe('a part Slack still refuses as too long', () => {
  it('is split in two and both halves are posted, the earlier parts once', async () => {
    // Slack's block limit is undocumented: the only case the fake's own state cannot produce
    // (the adapter stays under the fake's limit), so this one answer is scripted.
    const text = `${'alpha '.repeat(1200)}${'omega '.repeat(1200)}end`;
    h.fake.failNext('chat.postMessage', 'msg_too_long');
    const ref = await h.channel.send(CHAT, {
      text: rich(text),
      buttons: [{ id: 'tok', label: 'Approve' }],
    });
    const posted = tsOf(ref).map((ts) => h.fake.message(OPS, ts)!);
    expect(h.fake.calls.filter((c) => c.method === 'chat.postMessage').map((c) => c.ok)).toEqual([
      false,
      ...posted.map(() => true),
    ]);
    const shown = posted
      .map((m) =>
        m.blocks
          .filter((b) => b.type === 'section')
          .map((b) => String(b.text.text))
          .join(''),
      )
      .join('');
    expect(shown.replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
    expect(posted.filter((m) => m.blocks.some((b) => b.type === 'actions'))).toHaveLength(1);
    expect(posted.at(-1)!.blocks.at(-1)!.type).toBe('actions');
  });
});
