/**
 * Slash commands, button presses, private answers and reason modals through real discord.js and
 * the fake Discord: what a user types or presses becomes a neutral event, and what the handler
 * answers reaches Discord as the right interaction response.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordChannel } from '../../../src/bridges/discord/index.ts';
import type { ButtonPress, Command, InboundEvent, Reply } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import { openTestDb } from '../../db/helpers.ts';
import type { FakeDiscord, FakeInteraction } from '../../fakes/discord.ts';
import { type Harness, Inbox, startHarness } from './support.ts';

let h: Harness | undefined;
afterEach(async () => {
  const problems = h?.log.lines.filter((l) => l.level === 'warn' || l.level === 'error');
  await h?.close();
  h = undefined;
  expect(problems ?? []).toEqual([]);
});

const EPHEMERAL = 64;

/** Posts a message with Approve / Reject buttons and returns its id and ref. */
async function postCheckpoint(channel: DiscordChannel, chatRef: string) {
  const ref = await channel.send(chatRef, {
    text: rich('Checkpoint open'),
    buttons: [
      { id: 'tok-approve', label: 'Approve', style: 'primary' },
      { id: 'tok-reject', label: 'Reject', style: 'danger' },
    ],
  });
  return { ref, id: ref.slice(ref.lastIndexOf('/') + 1) };
}

const callbacksOf = (fake: FakeDiscord, i: FakeInteraction) =>
  fake.waitFor(
    () => fake.state.interactions.get(i.id)!.callbacks.length > 0 && i.callbacks,
    'a callback',
  );

describe('slash commands', () => {
  it('become Commands with the options as arguments, acknowledged at once', async () => {
    h = await startHarness();
    const alice = h.fake.state.user('alice');
    const typed = h.fake.slashCommand(alice, h.fake.state.text, 'run', [
      ['spec', 'add a login page'],
      ['workflow', 'demo'],
    ]);
    const event = (await h.inbox.next()) as Command;
    expect(event).toMatchObject({
      kind: 'command',
      name: 'run',
      args: ['demo', 'add', 'a', 'login', 'page'],
      rawText: '/run demo add a login page',
      chatRef: h.chatRef,
      user: { platform: 'discord', id: alice.id, display: 'Alice' },
      idempotencyKey: `discord:interaction:${typed.id}`,
    });
    expect(event.threadRef).toBeUndefined();
    // The command was answered publicly with what was typed.
    const [callback] = await callbacksOf(h.fake, typed);
    expect(callback).toMatchObject({ type: 4, data: { content: '`/run demo add a login page`' } });
  });

  it('keeps the verb order when Discord lists required options first, and passes picked users by id', async () => {
    h = await startHarness();
    const alice = h.fake.state.user('alice');
    h.fake.slashCommand(alice, h.fake.state.text, 'reject', [
      ['reason', 'tests are red'],
      ['run', '2026-11-29T143000Z-add-login'],
    ]);
    expect(await h.inbox.next()).toMatchObject({
      rawText: '/reject 2026-11-29T143000Z-add-login tests are red',
    });
    const bob = h.fake.state.user('bob');
    h.fake.slashCommand(alice, h.fake.state.text, 'allow', [
      ['user', bob.id],
      ['role', 'approver'],
    ]);
    expect(await h.inbox.next()).toMatchObject({ args: [bob.id, 'approver'] });
  });

  it('gives threads and DMs their own chat refs', async () => {
    h = await startHarness();
    const { state } = h.fake;
    const alice = state.user('alice');
    h.fake.slashCommand(alice, state.thread, 'status');
    expect(await h.inbox.next()).toMatchObject({
      chatRef: `discord:${state.guildId}:${state.text.id}:${state.thread.id}`,
      threadRef: state.thread.id,
    });
    const dm = state.dm(alice);
    h.fake.slashCommand(alice, dm, 'whoami');
    expect(await h.inbox.next()).toMatchObject({ chatRef: `discord:@me:${dm.id}` });

    // Sending to the thread's chat ref posts in the thread.
    await h.channel.send(`discord:${state.guildId}:${state.text.id}`, {
      text: rich('hi'),
      thread: state.thread.id,
    });
    expect(
      state.channelMessages(state.thread.id).some((m) => m.embeds[0]?.description === 'hi'),
    ).toBe(true);
  });
});

describe('button presses', () => {
  it('become ButtonPresses; a private answer is an ephemeral response', async () => {
    h = await startHarness();
    const { ref, id } = await postCheckpoint(h.channel, h.chatRef);
    h.inbox.onEvent = async (e) => {
      if (e.kind === 'button')
        await h!.channel.answer(e.interaction, 'Approved — 1 of 2 approvals', { private: true });
    };
    const bob = h.fake.state.user('bob');
    const press = h.fake.pressButton(bob, id, 'tok-approve');
    const event = (await h.inbox.next()) as ButtonPress;
    expect(event).toMatchObject({
      kind: 'button',
      token: 'tok-approve',
      messageRef: ref,
      chatRef: h.chatRef,
      user: { id: bob.id },
      idempotencyKey: `discord:interaction:${press.id}`,
    });
    const [callback] = await callbacksOf(h.fake, press);
    expect(callback).toMatchObject({
      type: 4,
      data: { content: 'Approved — 1 of 2 approvals', flags: EPHEMERAL },
    });
  });

  it('a public answer is posted for everyone', async () => {
    h = await startHarness();
    const { id } = await postCheckpoint(h.channel, h.chatRef);
    h.inbox.onEvent = async (e) => {
      if (e.kind === 'button')
        await h!.channel.answer(e.interaction, 'Bob approved', { private: false });
    };
    const press = h.fake.pressButton(h.fake.state.user('bob'), id, 'tok-approve');
    await h.inbox.next();
    const [callback] = await callbacksOf(h.fake, press);
    expect(callback!.type).toBe(4);
    expect(callback!.data?.flags ?? 0).toBe(0);
    expect(
      h.fake.state.channelMessages(h.fake.state.text.id).some((m) => m.content === 'Bob approved'),
    ).toBe(true);
  });

  it('a slow handler gets the press acknowledged in time; its answer follows up', async () => {
    h = await startHarness({ ackAfterMs: 50 }, { ackDeadlineMs: 1500 });
    const { id } = await postCheckpoint(h.channel, h.chatRef);
    h.inbox.onEvent = async (e) => {
      if (e.kind !== 'button') return;
      await h!.fake.waitFor(
        () => h!.fake.state.interactions.get(press.id)!.callbacks.length > 0,
        'the quiet ack',
      );
      await h!.channel.answer(e.interaction, 'done at last', { private: true });
    };
    const press = h.fake.pressButton(h.fake.state.user('bob'), id, 'tok-approve');
    await h.inbox.next();
    expect(press.callbacks.map((c) => c.type)).toEqual([6]);
    const followUp = h.fake.state.messages.get(press.followUps[0]!);
    expect(followUp).toMatchObject({ content: 'done at last', flags: EPHEMERAL });
  });

  it('a press answered too late is answered in the channel instead; no log line names the token', async () => {
    h = await startHarness({ ackAfterMs: 2000 }, { ackDeadlineMs: 50 });
    const { id } = await postCheckpoint(h.channel, h.chatRef);
    const failures: unknown[] = [];
    h.inbox.onEvent = async (e) => {
      if (e.kind !== 'button') return;
      await new Promise((resolve) => setTimeout(resolve, 120));
      await h!.channel
        .answer(e.interaction, 'too late', { private: false })
        .catch((err) => failures.push(err));
    };
    const bob = h.fake.state.user('bob');
    const press = h.fake.pressButton(bob, id, 'tok-approve');
    await h.inbox.next();
    expect(failures).toEqual([]);
    expect(press.callbacks).toEqual([]);
    expect(h.fake.state.channelMessages(h.fake.state.text.id).map((m) => m.content)).toContain(
      `<@${bob.id}> too late`,
    );
    // Said once, without the token; nothing more is tried through the interaction.
    const said = h.log.lines.filter((l) => /no longer answerable/.test(l.msg ?? ''));
    expect(said).toHaveLength(1);
    expect(JSON.stringify(said[0]!.obj)).toContain(`/interactions/${press.id}/:token/callback`);
    expect(JSON.stringify(h.log.lines)).not.toContain(press.token);
    expect(h.fake.calls.filter((c) => /\/callback$/.test(c.path))).toHaveLength(1);
  });

  it('a press nobody answers is acknowledged without a visible change', async () => {
    h = await startHarness();
    const { id } = await postCheckpoint(h.channel, h.chatRef);
    const press = h.fake.pressButton(h.fake.state.user('bob'), id, 'tok-approve');
    await h.inbox.next();
    expect((await callbacksOf(h.fake, press)).map((c) => c.type)).toEqual([6]);
  });
});

describe('edits of pressed and other copies', () => {
  it('updates the pressed copy through the interaction and other copies through REST', async () => {
    h = await startHarness();
    const first = await postCheckpoint(h.channel, h.chatRef);
    const dm = h.fake.state.dm(h.fake.state.user('carol'));
    const other = await postCheckpoint(h.channel, `discord:@me:${dm.id}`);
    const decided = { text: rich('Approved by Bob') };
    h.inbox.onEvent = async (e) => {
      if (e.kind !== 'button') return;
      await h!.channel.edit(first.ref, decided);
      await h!.channel.edit(other.ref, decided);
      await h!.channel.answer(e.interaction, 'approved', { private: true });
    };
    const press = h.fake.pressButton(h.fake.state.user('bob'), first.id, 'tok-approve');
    await h.inbox.next();

    expect(press.callbacks.map((c) => c.type)).toEqual([7]);
    expect(h.fake.state.messages.get(first.id)).toMatchObject({
      embeds: [{ description: 'Approved by Bob' }],
      components: [],
    });
    expect(
      h.fake.okCalls('PATCH', new RegExp(`^/channels/${dm.id}/messages/${other.id}$`)),
    ).toHaveLength(1);
    expect(h.fake.state.messages.get(other.id)).toMatchObject({ components: [] });
    // The private answer came after the update, as an ephemeral follow-up.
    expect(h.fake.state.messages.get(press.followUps[0]!)).toMatchObject({
      content: 'approved',
      flags: EPHEMERAL,
    });
  });
});

describe('reasons', () => {
  async function askOnReject(harness: Harness, before?: (e: ButtonPress) => Promise<void>) {
    const refs: string[] = [];
    harness.inbox.onEvent = async (e: InboundEvent) => {
      if (e.kind !== 'button') return;
      await before?.(e);
      await harness.channel.answer(e.interaction, 'Give your reason in the form.', {
        private: true,
      });
      refs.push(
        await harness.channel.askForReason(e.interaction, 'Why do you reject checkpoint cp-1?'),
      );
    };
    return refs;
  }

  it('Reject opens a modal; its submission is a Reply to the ref askForReason returned', async () => {
    h = await startHarness();
    const { id } = await postCheckpoint(h.channel, h.chatRef);
    const refs = await askOnReject(h);
    const bob = h.fake.state.user('bob');
    const press = h.fake.pressButton(bob, id, 'tok-reject');
    await h.inbox.next();

    expect(press.callbacks.map((c) => c.type)).toEqual([9]);
    const shown = JSON.stringify(press.modal);
    expect(shown).toContain('Why do you reject checkpoint cp-1?');
    // The answer given just before the modal is shown inside it, not lost.
    expect(shown).toContain('Give your reason in the form.');

    const submit = h.fake.submitModal(bob, press, { reason: 'the tests are red' });
    const reply = (await h.inbox.next()) as Reply;
    expect(reply).toMatchObject({
      kind: 'reply',
      text: 'the tests are red',
      replyToMessageRef: refs[0],
      chatRef: h.chatRef,
      user: { id: bob.id },
      idempotencyKey: `discord:interaction:${submit.id}`,
    });
    // Nobody answered the submission: it is acknowledged quietly.
    expect((await callbacksOf(h.fake, submit)).map((c) => c.type)).toEqual([6]);
  });

  it('when the press was already answered, a button offers the modal instead', async () => {
    h = await startHarness();
    const { id } = await postCheckpoint(h.channel, h.chatRef);
    const refs = await askOnReject(h, async (e) => {
      await h!.channel.answer(e.interaction, 'Rejecting…', { private: false });
    });
    const bob = h.fake.state.user('bob');
    const press = h.fake.pressButton(bob, id, 'tok-reject');
    await h.inbox.next();
    expect(press.callbacks.map((c) => c.type)).toEqual([4]);
    const offer = press.followUps
      .map((m) => h!.fake.state.messages.get(m)!)
      .find((m) => m.components.length > 0)!;
    expect(offer.flags & EPHEMERAL).toBe(EPHEMERAL);

    const customId = (offer.components[0] as { components: { custom_id: string }[] }).components[0]!
      .custom_id;
    const open = h.fake.pressButton(bob, offer.id, customId);
    await h.fake.waitFor(() => open.modal, 'the modal');
    expect(JSON.stringify(open.modal)).toContain('Why do you reject checkpoint cp-1?');
    h.fake.submitModal(bob, open, { reason: 'not ready' });
    expect(await h.inbox.next()).toMatchObject({
      kind: 'reply',
      text: 'not ready',
      replyToMessageRef: refs[0],
    });
    // The adapter's own button never reached the handler as a press.
    expect(h.inbox.all.filter((e) => e.kind === 'button')).toHaveLength(1);
  });

  it('the offered button opens the same question after the bridge restarted', async () => {
    const db = await openTestDb();
    try {
      const state = db.repos.channelState.scope('discord');
      h = await startHarness({ state });
      const { id } = await postCheckpoint(h.channel, h.chatRef);
      const refs = await askOnReject(h, async (e) => {
        await h!.channel.answer(e.interaction, 'Rejecting…', { private: false });
      });
      const bob = h.fake.state.user('bob');
      const press = h.fake.pressButton(bob, id, 'tok-reject');
      await h.inbox.next();
      const offer = press.followUps
        .map((m) => h!.fake.state.messages.get(m)!)
        .find((m) => m.components.length > 0)!;
      const customId = (offer.components[0] as { components: { custom_id: string }[] })
        .components[0]!.custom_id;

      // A new process: a new channel on the same bridge.db, the old one gone.
      await h.channel.stop();
      const inbox = new Inbox();
      const channel = new DiscordChannel({
        token: h.fake.token,
        apiUrl: h.fake.apiUrl,
        logger: h.log,
        state,
      });
      await channel.start(inbox.handler);
      h = { ...h, channel, inbox };
      const open = h.fake.pressButton(bob, offer.id, customId);
      await h.fake.waitFor(() => open.modal, 'the modal');
      expect(JSON.stringify(open.modal)).toContain('Why do you reject checkpoint cp-1?');
      h.fake.submitModal(bob, open, { reason: 'not ready' });
      expect(await inbox.next()).toMatchObject({ kind: 'reply', replyToMessageRef: refs[0] });
      expect(h.log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
    } finally {
      await h?.close();
      h = undefined;
      await db.cleanup();
    }
  });
});
