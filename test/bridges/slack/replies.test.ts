/** Where a Slack reply to a message goes (`OutgoingMessage.replyTo`): the message's thread. */
import { describe, expect, it } from 'vitest';
import { replyThread } from '../../../src/bridges/slack/outbound.ts';

const OPS = { team: 'T0TEAM', channel: 'C0OPS' };

describe('replyThread', () => {
  it('threads under the message (its first part), or in the thread it is in', () => {
    const top = 'slack:T0TEAM:C0OPS/1700000000.000100,1700000000.000200';
    expect(replyThread(OPS, top)).toEqual({ ...OPS, thread: '1700000000.000100' });
    const inThread = 'slack:T0TEAM:C0OPS:1690000000.000001/1700000000.000300';
    expect(replyThread(OPS, inThread)).toEqual({ ...OPS, thread: '1690000000.000001' });
  });

  it('leaves a message of another conversation alone', () => {
    expect(replyThread(OPS, 'slack:T0TEAM:C0OTHER/1700000000.000100')).toEqual(OPS);
  });

  it('refuses a ref that is not a message (a file, a modal)', () => {
    expect(() => replyThread(OPS, 'slack:T0TEAM:C0OPS/file:F123')).toThrow(
      /not an editable message/,
    );
  });
});
