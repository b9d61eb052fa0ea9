/**
 * Slack channels that refuse the bot, from the fake's own membership state (no injected error),
 * through real Bolt and WebClient: a private answer reaches the presser through the press's
 * response_url for every membership refusal of chat.postEphemeral (not only not_in_channel), and
 * a post to a channel that refuses the bot is a ChatUnreachableError naming Slack's reason.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ButtonPress } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import { ChatUnreachableError, type PhasebridgeError } from '../../../src/errors.ts';
import { ALICE, BOB, type Harness, OPS, startHttpHarness, tsOf } from './support.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHttpHarness();
});

afterEach(async () => {
  await h.close();
});

const CHAT = 'slack:T0FAKE01:C0OPS';

/** The membership changes after which chat.postEphemeral to Bob is refused. */
const EPHEMERAL_REFUSALS: readonly [string, (h: Harness) => void][] = [
  ['not_in_channel', (x) => x.fake.api.channels.removeBot(OPS)],
  ['channel_not_found', (x) => x.fake.api.channels.hide(OPS)],
  ['user_not_in_channel', (x) => x.fake.api.channels.setMembers(OPS, [ALICE.id])],
];

describe('a private answer in a channel that refuses ephemerals', () => {
  for (const [code, change] of EPHEMERAL_REFUSALS) {
    it(`reaches the presser through the response_url on ${code}`, async () => {
      const ref = await h.channel.send(CHAT, {
        text: rich('Checkpoint'),
        buttons: [{ id: 'tok', label: 'Approve' }],
      });
      change(h);
      h.react = async (event) => {
        if (event.kind === 'button')
          await h.channel.answer(event.interaction, 'Only approvers can approve.', {
            private: true,
          });
      };
      await h.fake.pressButton({ user: BOB, channel: OPS, ts: tsOf(ref)[0]!, label: 'Approve' });
      (await h.inbox.next()) as ButtonPress;
      const [response] = await h.fake.waitForResponses(1);
      expect(response!.body).toEqual({
        response_type: 'ephemeral',
        replace_original: false,
        text: 'Only approvers can approve.',
      });
      // Slack itself refused the ephemeral: the fallback was needed, not a shortcut.
      expect(h.fake.calls.filter((c) => c.method === 'chat.postEphemeral')).toEqual([
        expect.objectContaining({ ok: false, error: code }),
      ]);
      expect(h.fake.ephemerals).toEqual([]);
    });
  }
});

describe('a post to a channel that refuses the bot', () => {
  const CHANNEL_REFUSALS: readonly [string, (h: Harness) => void][] = [
    ['not_in_channel', (x) => x.fake.api.channels.removeBot(OPS)],
    ['is_archived', (x) => x.fake.api.channels.archive(OPS)],
    ['channel_not_found', (x) => x.fake.api.channels.hide(OPS)],
  ];
  for (const [code, change] of CHANNEL_REFUSALS) {
    it(`is a CHAT_UNREACHABLE error with reason ${code}`, async () => {
      change(h);
      const err = await h.channel.send(CHAT, { text: rich('hello') }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ChatUnreachableError);
      expect(err).toMatchObject({ code: 'CHAT_UNREACHABLE', reason: code, scope: 'chat' });
      expect((err as PhasebridgeError).message).toContain('chat.postMessage');
      expect(h.fake.api.messages.get(OPS) ?? []).toEqual([]);
    });
  }

  it('a person missing from the channel is not the channel refusing the bot', async () => {
    h.fake.api.channels.setMembers(OPS, [ALICE.id]);
    await expect(h.channel.send(CHAT, { text: rich('hello') })).resolves.toMatch(/C0OPS/);
  });
});
