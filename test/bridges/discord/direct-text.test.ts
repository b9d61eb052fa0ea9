/** Issue 38: a person's message in a DM with the bot is DirectText; guild messages and bots are not. */
import { describe, expect, it } from 'vitest';
import { type MessageFacts, toDirectText } from '../../../src/bridges/discord/inbound.ts';

const BOT_ID = '900';
const dm = (extra: Partial<MessageFacts> = {}): MessageFacts => ({
  id: 'm1',
  guildId: null,
  channelId: 'dm-7',
  threadParentId: null,
  type: 0,
  content: ' hello ',
  author: { id: '42', username: 'alice', globalName: 'Alice' },
  fromBot: false,
  referenceId: null,
  files: [],
  ...extra,
});

describe('toDirectText', () => {
  it("is DirectText for a person's DM, trimmed, keyed by the message", () => {
    const t = toDirectText(dm(), BOT_ID);
    expect(t).toMatchObject({ kind: 'text', text: 'hello', idempotencyKey: 'discord:message:m1' });
    expect(t?.chatRef).toContain('dm-7');
    expect(t?.user.id).toBe('42');
  });

  it('ignores guild messages, bots (ourselves too), empty text and system messages', () => {
    for (const extra of [
      { guildId: 'G1' },
      { fromBot: true },
      { author: { id: BOT_ID, username: 'pb', globalName: null } },
      { content: '   ' },
      { type: 7 },
    ]) {
      expect([extra, toDirectText(dm(extra), BOT_ID)]).toEqual([extra, undefined]);
    }
  });
});
