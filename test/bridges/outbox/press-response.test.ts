/**
 * The edit of a pressed message answers the press through the press's own response (issue 31):
 * Slack's `response_url` with `replace_original`, Discord's interaction callback (UPDATE_MESSAGE).
 * Neither counts in the platform's limits, so the outbox neither paces it nor holds it behind
 * its chat's call in flight: beside a fan-out that keeps chat.update's workspace window full, or a
 * chat whose call waits in discord.js's REST queue, the person sees the decision at once. Other
 * copies of the message still get it through the ordinary edit. Real adapters against the
 * platforms' fakes, the real Outbox over a bridge.db file.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Channel } from '../../../src/bridges/channel.ts';
import type { InboundEvent } from '../../../src/bridges/events.ts';
import type { OutgoingMessage } from '../../../src/bridges/messages.ts';
import { limitsOf, Outbox, OutboxStore } from '../../../src/bridges/outbox/index.ts';
import { plain } from '../../../src/bridges/render-text.ts';
import { migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { slow, waitUntil } from '../../support/slowdown.ts';
import { startHarness as startDiscord } from '../discord/support.ts';
import { BOB, OPS, startHttpHarness as startSlack, tsOf } from '../slack/support.ts';

const checkpoint: OutgoingMessage = {
  text: [plain('Checkpoint plan')],
  buttons: [
    { id: 'tok-approve', label: 'Approve', style: 'primary' },
    { id: 'tok-reject', label: 'Reject', style: 'danger' },
  ],
  urgency: 'decision',
};
/** The decision a press caused, as chatops queues it (interactive, the copy's decision owner). */
const decided: OutgoingMessage = { text: [plain('Approved by Bob')], urgency: 'interactive' };

let dir: string;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-press-response-'));
  const db = openBridgeDb({ file: path.join(dir, 'bridge.db') });
  await migrateToLatest(db);
  await db.close();
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The real Outbox of `inner`'s platform over the test's bridge.db. */
function outboxOf(inner: Channel): Outbox {
  const store = OutboxStore.open(path.join(dir, 'bridge.db'));
  const outbox = new Outbox({ store, inner, limits: limitsOf(inner.platform) });
  outbox.start();
  cleanups.push(async () => {
    await outbox.stop();
    store.close();
  });
  return outbox;
}

describe('Slack: the pressed message is replaced through its response_url', () => {
  it('beside a full chat.update window, the decision shows at once; no chat.update for it', async () => {
    const h = await startSlack();
    cleanups.push(() => h.close());
    const outbox = outboxOf(h.channel);
    const team = h.fake.workspace.teamId;
    const cpRef = (await outbox.enqueue('send', `slack:${team}:${OPS}`, checkpoint))!;
    // A fan-out's edits fill the workspace's 50 chat.update a minute.
    const fanRef = (await outbox.enqueue('send', `slack:${team}:C0FAN`, checkpoint))!;
    for (let i = 0; i < 50; i++) {
      await outbox.enqueue('edit', fanRef, { text: [plain(`step ${i}`)], urgency: 'decision' });
    }
    h.react = async (e: InboundEvent) => {
      if (e.kind === 'button') await outbox.enqueue('edit', cpRef, decided);
    };
    const [ts] = tsOf(cpRef);
    await h.fake.pressButton({ user: BOB, channel: OPS, ts: ts!, label: 'Approve' });
    // Through chat.update it would wait out the window: most of a minute.
    const shown = await waitUntil(() => {
      const m = h.fake.message(OPS, ts!);
      return m && /Approved by Bob/.test(m.text) ? m : undefined;
    });
    expect(shown.blocks.some((b) => b.type === 'actions')).toBe(false);
    expect(h.fake.responses.map((r) => r.body.replace_original)).toEqual([true]);
    const updates = h.fake.calls.filter((c) => c.method === 'chat.update');
    expect(updates.filter((c) => c.params.ts === ts)).toEqual([]);
    expect(updates).toHaveLength(50);
  });

  it('the other copies get the decision through chat.update', async () => {
    const h = await startSlack();
    cleanups.push(() => h.close());
    const outbox = outboxOf(h.channel);
    const team = h.fake.workspace.teamId;
    const pressed = (await outbox.enqueue('send', `slack:${team}:${OPS}`, checkpoint))!;
    const other = (await outbox.enqueue('send', `slack:${team}:C0OTHER`, checkpoint))!;
    h.react = async (e: InboundEvent) => {
      if (e.kind !== 'button') return;
      await Promise.all([
        outbox.enqueue('edit', pressed, decided),
        outbox.enqueue('edit', other, decided),
      ]);
    };
    const [ts] = tsOf(pressed);
    const [otherTs] = tsOf(other);
    await h.fake.pressButton({ user: BOB, channel: OPS, ts: ts!, label: 'Approve' });
    await waitUntil(() =>
      [h.fake.message(OPS, ts!), h.fake.message('C0OTHER', otherTs!)].every((m) =>
        /Approved by Bob/.test(m?.text ?? ''),
      ),
    );
    const updated = h.fake.calls.filter((c) => c.method === 'chat.update').map((c) => c.params.ts);
    expect(updated).toEqual([otherTs]);
    expect(h.fake.responses).toHaveLength(1);
  });
});

describe('Discord: the pressed message is updated through the interaction', () => {
  it('while its chat’s call waits out a 429, the decision shows through UPDATE_MESSAGE', async () => {
    const h = await startDiscord();
    cleanups.push(() => h.close());
    const outbox = outboxOf(h.channel);
    const cpRef = (await outbox.enqueue('send', h.chatRef, checkpoint))!;
    const statusRef = (await outbox.enqueue('send', h.chatRef, { text: [plain('Run: step 1')] }))!;
    const cpId = cpRef.slice(cpRef.lastIndexOf('/') + 1);
    const statusId = statusRef.slice(statusRef.lastIndexOf('/') + 1);
    // The chat's status edit is in flight, held by discord.js for 3 s or more (a 429 it waits
    // out; longer on a slowed machine, so the press below surely comes while it waits).
    const held = Math.ceil(slow(3000) / 1000);
    h.fake.rateLimitNext({ method: 'PATCH', path: new RegExp(`/messages/${statusId}$`) }, held);
    const statusEdit = outbox.enqueue('edit', statusRef, { text: [plain('Run: step 2')] });
    await waitUntil(() => h.fake.calls.some((c) => c.status === 429));
    h.inbox.onEvent = async (e) => {
      if (e.kind !== 'button') return;
      // As chatops does: the presser is told privately, the handler returns, and the decision
      // follows through the outbox.
      await h.channel.answer(e.interaction, 'Your approval is recorded.', { private: true });
      void outbox.enqueue('edit', cpRef, decided);
    };
    const press = h.fake.pressButton(h.fake.state.user('bob'), cpId, 'tok-approve');
    await h.inbox.next();
    await waitUntil(() => h.fake.state.messages.get(cpId)?.components.length === 0);
    // Shown before the chat's call in flight came back, and through the interaction only.
    expect(h.fake.state.messages.get(statusId)?.embeds[0]?.description).not.toMatch(/step 2/);
    expect(press.callbacks.map((c) => c.type)).toEqual([7]);
    expect(h.fake.okCalls('PATCH', new RegExp(`/messages/${cpId}$`))).toEqual([]);
    // The private answer follows the update.
    await waitUntil(() => press.followUps.length > 0);
    expect(h.fake.state.messages.get(press.followUps[0]!)?.content).toBe(
      'Your approval is recorded.',
    );
    await statusEdit;
    expect(h.fake.state.messages.get(statusId)?.embeds[0]?.description).toMatch(/step 2/);
  });
});
