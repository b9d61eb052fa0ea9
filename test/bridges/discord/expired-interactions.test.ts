/**
 * Interactions Discord no longer takes, from the fake's own clock: the initial response is due
 * within 3 s (10062 Unknown interaction after), follow-ups work for 15 minutes (401 / 50027
 * Invalid Webhook Token after). Real discord.js against the fake; what the presser sees is a
 * message in the channel that mentions them, and the pressed message still gets its edit.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ButtonPress, InboundEvent } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import { INTERACTION_TOKEN_TTL_MS } from '../../fakes/discord.ts';
import { type Harness, startHarness } from './support.ts';

let h: Harness | undefined;
afterEach(async () => {
  const problems = h?.log.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  await h?.close();
  h = undefined;
  expect(problems ?? []).toEqual([]);
});

async function postCheckpoint(harness: Harness) {
  const ref = await harness.channel.send(harness.chatRef, {
    text: rich('Checkpoint open'),
    buttons: [
      { id: 'tok-approve', label: 'Approve', style: 'primary' },
      { id: 'tok-reject', label: 'Reject', style: 'danger' },
    ],
  });
  return { ref, id: ref.slice(ref.lastIndexOf('/') + 1) };
}

/** Bot messages everyone in the text channel sees, by content. */
const channelTexts = (harness: Harness) =>
  harness.fake.state.channelMessages(harness.fake.state.text.id).map((m) => m.content);

/** In the handler: waits for the adapter's quiet acknowledgement, then 15 minutes pass. */
async function ackedThenExpired(harness: Harness, e: ButtonPress): Promise<void> {
  const interaction = [...harness.fake.state.interactions.values()].find(
    (i) => `discord:interaction:${i.id}` === e.idempotencyKey,
  )!;
  await harness.fake.waitFor(() => interaction.callbacks.length > 0, 'the quiet ack');
  harness.fake.advanceClock(INTERACTION_TOKEN_TTL_MS + 1000);
}

describe('a follow-up after the token expired', () => {
  it('a private answer is posted in the channel, mentioning the presser', async () => {
    h = await startHarness({ ackAfterMs: 50 });
    const { id } = await postCheckpoint(h);
    h.inbox.onEvent = async (e: InboundEvent) => {
      if (e.kind !== 'button') return;
      await ackedThenExpired(h!, e);
      await h!.channel.answer(e.interaction, 'Approved — 1 of 2 approvals', { private: true });
    };
    const bob = h.fake.state.user('bob');
    const press = h.fake.pressButton(bob, id, 'tok-approve');
    await h.inbox.next();

    expect(press.callbacks.map((c) => c.type)).toEqual([6]);
    // Discord refused the follow-up: 401, Invalid Webhook Token.
    const refused = h.fake.calls.filter((c) => c.method === 'POST' && /^\/webhooks\//.test(c.path));
    expect(refused.map((c) => c.status)).toEqual([401]);
    expect(press.followUps).toEqual([]);
    expect(channelTexts(h)).toContain(`<@${bob.id}> Approved — 1 of 2 approvals`);
    const posted = h.fake.okCalls(
      'POST',
      new RegExp(`^/channels/${h.fake.state.text.id}/messages$`),
    );
    expect(posted.at(-1)!.body).toMatchObject({ allowed_mentions: { users: [bob.id] } });
  });

  it('the reason prompt is posted in the channel with its button, which still opens the modal', async () => {
    h = await startHarness({ ackAfterMs: 50 });
    const { id } = await postCheckpoint(h);
    const refs: string[] = [];
    h.inbox.onEvent = async (e: InboundEvent) => {
      if (e.kind !== 'button') return;
      await ackedThenExpired(h!, e);
      refs.push(await h!.channel.askForReason(e.interaction, 'Why do you reject cp-1?'));
    };
    const bob = h.fake.state.user('bob');
    h.fake.pressButton(bob, id, 'tok-reject');
    await h.inbox.next();

    const offer = h.fake.state
      .channelMessages(h.fake.state.text.id)
      .find((m) => m.content === `<@${bob.id}> Why do you reject cp-1?`)!;
    expect(offer.components).toHaveLength(1);
    const customId = (offer.components[0] as { components: { custom_id: string }[] }).components[0]!
      .custom_id;
    // A new press has a new token: the modal opens.
    const open = h.fake.pressButton(bob, offer.id, customId);
    await h.fake.waitFor(() => open.modal, 'the modal');
    h.fake.submitModal(bob, open, { reason: 'the tests are red' });
    expect(await h.inbox.next()).toMatchObject({
      kind: 'reply',
      text: 'the tests are red',
      replyToMessageRef: refs[0],
    });
  });
});

describe('an initial response after the 3 s', () => {
  it('the pressed message is edited with a normal call and the private answer goes to the channel', async () => {
    h = await startHarness();
    const first = await postCheckpoint(h);
    h.inbox.onEvent = async (e: InboundEvent) => {
      if (e.kind !== 'button') return;
      // The bridge was slow: more than 3 s passed since the press before it answered.
      h!.fake.advanceClock(4000);
      await h!.channel.edit(first.ref, { text: rich('Approved by Bob') });
      await h!.channel.answer(e.interaction, 'Approved', { private: true });
    };
    const bob = h.fake.state.user('bob');
    const press = h.fake.pressButton(bob, first.id, 'tok-approve');
    await h.inbox.next();

    expect(press.callbacks).toEqual([]);
    // The update met 10062; the answer then went to the channel without trying the token again.
    expect(h.fake.calls.filter((c) => /\/callback$/.test(c.path)).map((c) => c.status)).toEqual([
      404,
    ]);
    expect(h.fake.state.messages.get(first.id)).toMatchObject({
      embeds: [{ description: 'Approved by Bob' }],
      components: [],
    });
    expect(channelTexts(h)).toContain(`<@${bob.id}> Approved`);
  });
});
