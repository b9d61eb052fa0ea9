/**
 * Issue 29: a Slack person seen only through a message event (a thread reply carries the user id
 * and nothing else) is named through users.info, once (cached), by real Bolt against the fake;
 * a failed lookup leaves the id and is not retried at once; a press never waits for a lookup.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { InboundEvent } from '../../../src/bridges/events.ts';
import type { FakeUser } from '../../fakes/slack.ts';
import { type Harness, OPS, startHttpHarness } from './support.ts';

const CAROL: FakeUser = { id: 'U0CAROL', name: 'carol' };
const THREAD = '1700000000.000100';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const who = (e: InboundEvent) => [e.kind, e.user.id, e.user.display];

describe('Slack names people seen by id only', () => {
  it('a thread reply is named by users.info, asked once for two replies', async () => {
    h = await startHttpHarness();
    await h.fake.sendThreadReply({ user: CAROL, channel: OPS, threadTs: THREAD, text: 'one' });
    expect(who(await h.inbox.next())).toEqual(['reply', 'U0CAROL', '@carol']);
    await h.fake.sendThreadReply({ user: CAROL, channel: OPS, threadTs: THREAD, text: 'two' });
    expect(who(await h.inbox.next())).toEqual(['reply', 'U0CAROL', '@carol']);
    expect(h.fake.okCalls('users.info').map((c) => c.params.user)).toEqual(['U0CAROL']);
  });

  it('a name the event carries (user_profile) is used without asking', async () => {
    h = await startHttpHarness();
    await h.fake.sendThreadReply({
      user: CAROL,
      channel: OPS,
      threadTs: THREAD,
      text: 'hi',
      extra: { user_profile: { name: 'carol.w', display_name: 'Carol W' } },
    });
    expect(who(await h.inbox.next())).toEqual(['reply', 'U0CAROL', '@carol.w']);
    expect(h.fake.okCalls('users.info')).toEqual([]);
  });

  it('a failed lookup goes on with the id, and is not asked again at once', async () => {
    h = await startHttpHarness();
    h.fake.failNext('users.info', 'missing_scope');
    await h.fake.sendThreadReply({ user: CAROL, channel: OPS, threadTs: THREAD, text: 'one' });
    expect(who(await h.inbox.next())).toEqual(['reply', 'U0CAROL', 'U0CAROL']);
    await h.fake.sendThreadReply({ user: CAROL, channel: OPS, threadTs: THREAD, text: 'two' });
    expect(who(await h.inbox.next())).toEqual(['reply', 'U0CAROL', 'U0CAROL']);
    expect(h.fake.calls.filter((c) => c.method === 'users.info')).toHaveLength(1);
  });

  it('a press carries its handle and never asks; the handle then names the replies', async () => {
    h = await startHttpHarness();
    const ref = await h.channel.send(`slack:T0FAKE01:${OPS}`, {
      text: [{ kind: 'plain', text: 'Checkpoint' }],
      buttons: [{ id: 'tok.a', label: 'Approve' }],
    });
    const ts = ref.slice(ref.lastIndexOf('/') + 1);
    await h.fake.pressButton({ user: CAROL, channel: OPS, ts, label: 'Approve' });
    expect(who(await h.inbox.next())).toEqual(['button', 'U0CAROL', '@carol']);
    await h.fake.sendThreadReply({ user: CAROL, channel: OPS, threadTs: ts, text: 'and this' });
    expect(who(await h.inbox.next())).toEqual(['reply', 'U0CAROL', '@carol']);
    expect(h.fake.calls.filter((c) => c.method === 'users.info')).toEqual([]);
  });
});
