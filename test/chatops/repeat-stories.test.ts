/**
 * What a kill in the outbox's send window repeats (issue 39), through the outbox as `serve` runs
 * it:
 * - a checkpoint message the platform got twice (the dead process's call, then the next
 *   process's resend): the repeat carries the copy's buttons but is not the copy the bridge
 *   edits. A press on it counts as a press on the copy, and the repeat loses its buttons, showing
 *   the decision; a message carrying the token whose send was never repeated stays refused.
 * - a checkpoint decided while one copy's send is still unanswered (the chat shows it, the
 *   bridge does not know its id yet) and another copy's decision edit is on its way: once the
 *   send is confirmed, that copy shows the decision too.
 * - the answer to a press that reaches the chat as a message (Telegram's 15 s are over) goes
 *   through the outbox, keyed: the same answer to the same person on the same message is posted
 *   once, however often the press comes (pressed again, or redelivered after a restart).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/telegram.ts';
import { holdsFor } from '../support/slowdown.ts';
import { ALICE, BOB, CAROL, STRANGERS, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create({ outbox: true });
});
afterEach(async () => {
  await w.cleanup();
});

const buttonsOf = (m: StoredMessage | undefined) =>
  ((m?.replyMarkup?.inline_keyboard ?? []) as unknown[][]).flat();

/**
 * What a kill between the platform's answer and the outbox's confirmation leaves: the chat holds
 * a second message with the copy's text and buttons that bridge.db knows nothing of; with
 * `attempted`, the copy's send is marked handed over twice (the resend after the restart).
 */
async function repeatOf(plan: StoredMessage, attempted: boolean): Promise<StoredMessage> {
  await w.stop();
  if (attempted) {
    const db = new Database(path.join(w.home, 'bridge.db'));
    const n = db
      .prepare(
        `update outbox set attempts = 2 where kind = 'send' and owner_json like '{"kind":"checkpoint",%'`,
      )
      .run().changes;
    db.close();
    expect(n).toBe(1);
  }
  const { message_id: _, ...copy } = plan;
  const repeat = w.fake.store.store({ ...copy, edits: 0 }, undefined);
  await w.start();
  return repeat;
}

describe('a checkpoint message sent twice by a kill in the send window', () => {
  it('a press on the repeat counts, and the repeat shows the decision without buttons', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const repeat = await repeatOf(plan, true);

    expect(await w.answerTo(w.press(BOB, repeat, 'Approve'))).toMatch(/^Approved/);
    await until(
      () => /^✅ Checkpoint plan:1/.test(w.fake.message(TEAM.id, plan.message_id)?.text ?? ''),
      'the copy to show the decision',
    );
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, repeat.message_id)).length === 0,
      'the repeat to lose its buttons',
    );
    expect(w.fake.message(TEAM.id, repeat.message_id)!.text).toMatch(
      /^✅ Checkpoint plan:1[\s\S]*Approved by @bob/,
    );
    expect(buttonsOf(w.fake.message(TEAM.id, plan.message_id))).toEqual([]);
  });

  it('a repeat pressed after the decision is put right too', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const repeat = await repeatOf(plan, true);
    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toMatch(/^Approved/);
    await w.message(/^✅ Checkpoint plan:1/);

    expect(await w.answerTo(w.press(BOB, repeat, 'Approve'))).toMatch(
      /^Checkpoint plan:1 already approved/,
    );
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, repeat.message_id)).length === 0,
      'the repeat to lose its buttons',
    );
    expect(w.fake.message(TEAM.id, repeat.message_id)!.text).toMatch(/^✅ Checkpoint plan:1/);
  });

  it('a message carrying the token whose send was handed over once stays refused', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const other = await repeatOf(plan, false);

    expect(await w.answerTo(w.press(BOB, other, 'Approve'))).toBe(
      'This button is not valid any more.',
    );
    const state = await w.b.orchestrator.getRun(/— run (\S+)/.exec(plan.text!)![1]!);
    expect(state.checkpoint?.id).toBe('plan:1');
    expect(buttonsOf(w.fake.message(TEAM.id, other.message_id)).length).toBeGreaterThan(0);
  });
});

describe('a checkpoint message whose send a kill left unanswered, then sent again', () => {
  /**
   * What a kill between Telegram's answer and the outbox's confirmation leaves: the chat shows
   * the copy (`plan`), bridge.db knows no id for it and its send is still `attempted`.
   */
  async function killedInTheSendWindow(plan: StoredMessage): Promise<void> {
    await w.stop();
    const db = new Database(path.join(w.home, 'bridge.db'));
    const owner = db
      .prepare(
        `select owner_json from outbox where kind = 'send' and owner_json like '{"kind":"checkpoint",%'`,
      )
      .get() as { owner_json: string };
    const { id } = JSON.parse(owner.owner_json) as { id: number };
    db.prepare(`update outbox set state = 'attempted', result_ref = null where owner_json = ?`).run(
      owner.owner_json,
    );
    db.prepare('update checkpoint_messages set message_ref = null where id = ?').run(id);
    db.close();
    expect(buttonsOf(w.fake.message(TEAM.id, plan.message_id)).length).toBeGreaterThan(0);
  }

  it('the first copy loses its buttons when the resend is confirmed, nobody pressing it', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    await killedInTheSendWindow(plan);
    await w.start();

    const copies = () =>
      w.fake.botMessages(TEAM.id).filter((m) => /Checkpoint plan:1/.test(m.text ?? ''));
    await until(() => copies().length === 2, 'the resend');
    const resent = copies()[1]!;
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, plan.message_id)).length === 0,
      'the first copy to lose its buttons',
    );
    await until(
      () => /sent twice by a restart/.test(w.fake.message(TEAM.id, plan.message_id)?.text ?? ''),
      'the first copy to point at the other one',
    );
    expect(buttonsOf(w.fake.message(TEAM.id, resent.message_id)).length).toBeGreaterThan(0);

    // Decided on the copy the bridge knows: no message of the checkpoint offers buttons.
    expect(await w.answerTo(w.press(BOB, resent, 'Approve'))).toMatch(/^Approved/);
    await until(
      () => /^✅ Checkpoint plan:1/.test(w.fake.message(TEAM.id, resent.message_id)?.text ?? ''),
      'the copy to show the decision',
    );
    expect(copies().filter((m) => buttonsOf(m).length > 0)).toEqual([]);
  });

  it('a person’s message and the bot’s other messages between the two copies are left alone', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    await killedInTheSendWindow(plan);
    // Said in the chat while the bridge was down: its id lies between the two copies.
    w.say(CAROL, 'is anyone looking at this?');
    await w.start();

    const copies = () =>
      w.fake.botMessages(TEAM.id).filter((m) => /Checkpoint plan:1/.test(m.text ?? ''));
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, plan.message_id)).length === 0,
      'the first copy to lose its buttons',
    );
    const resent = copies()[1]!;
    expect(buttonsOf(resent).length).toBeGreaterThan(0);
    const edits = w.fake.calls.filter((c) => c.method === 'editMessageReplyMarkup');
    // Only ids the bridge does not know, below the resend, were looked at; none of them landed
    // on a message other than the first copy.
    const touched = edits.filter((c) => c.ok).map((c) => Number(c.params.message_id));
    expect(touched).toEqual([plan.message_id]);
    for (const c of edits) {
      expect(Number(c.params.message_id)).toBeLessThan(resent.message_id);
      expect(Number(c.params.message_id)).toBeGreaterThanOrEqual(plan.message_id);
    }
  });
});

describe('an answer past Telegram’s callback window', () => {
  const EXPIRED =
    'Bad Request: query is too old and response timeout expired or query ID is invalid';

  it('is posted once through the outbox, however often the press comes', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const answers = () =>
      w.fake.botMessages(TEAM.id).filter((m) => m.replyToId === plan.message_id);
    const refusedPresses = () =>
      w.fake.calls.filter((c) => c.method === 'answerCallbackQuery' && !c.ok).length;

    // Carol has no role: each press is refused, with the same words, after the window.
    w.fake.failNext('answerCallbackQuery', 400, EXPIRED);
    w.press(CAROL, plan, 'Approve');
    await until(() => answers().length === 1, 'the answer as a reply to the checkpoint');
    w.fake.failNext('answerCallbackQuery', 400, EXPIRED);
    const again = w.press(CAROL, plan, 'Approve');
    await until(() => refusedPresses() === 2, 'the second press answered');
    await w.stop();
    // The press redelivered to the next process (a kill before its update was confirmed).
    await w.start();
    w.fake.failNext('answerCallbackQuery', 400, EXPIRED);
    w.fake.pushUpdate({ callback_query: again.callback_query });
    await until(() => refusedPresses() === 3, 'the redelivered press answered');

    await holdsFor(() => answers().length === 1, 1000, 'the answer was posted again');
    const rows = new Database(path.join(w.home, 'bridge.db'), { readonly: true });
    const keyed = rows
      .prepare(`select state from outbox where dedupe_key like 'press:%'`)
      .all() as { state: string }[];
    rows.close();
    expect(keyed.map((r) => r.state)).toEqual(['confirmed']);
  });
});

describe('a checkpoint decided while a copy’s send is unanswered', () => {
  // The run's last checkpoint: no later checkpoint send's confirmation looks at its copies again.
  it('shows the decision on that copy once its send is confirmed, while another copy is being edited', async () => {
    const other = await w.b.repos.bindings.bind({
      chatRef: `telegram:${STRANGERS.id}`,
      workspace: w.workspace,
    });
    await w.b.repos.allowlist.allow(
      { bindingId: other.id },
      'telegram',
      String(BOB.id),
      'approver',
    );
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toMatch(/^Approved/);
    const first = await w.message(/Checkpoint review:1/);
    await w.message(/Checkpoint review:1/, STRANGERS);
    const runId = /— run (\S+)/.exec(first.text!)![1]!;
    const copyIn = async (chatRef: string) =>
      (await w.b.repos.checkpointMessages.listByCheckpoint(runId, 'review:1')).find(
        (r) => r.chatRef === chatRef,
      );
    await until(
      async () => (await copyIn(`telegram:${STRANGERS.id}`))?.messageRef != null,
      'the other chat’s copy sent',
    );
    const team = (await copyIn(TEAM_REF))!;
    await w.stop();
    // What a kill before the copy's send was answered leaves: its row still to deliver, no id.
    const db = new Database(path.join(w.home, 'bridge.db'));
    db.prepare('update checkpoint_messages set message_ref = null where id = ?').run(team.id);
    const n = db
      .prepare(`update outbox set state = 'pending' where owner_json = ?`)
      .run(JSON.stringify({ kind: 'checkpoint', id: team.id })).changes;
    db.close();
    expect(n).toBe(1);
    w.fake.message(TEAM.id, first.message_id)!.deleted = true;

    const checkpointIn = (chat: number) => (p: Record<string, unknown>) =>
      Number(p.chat_id) === chat && String(p.text).includes('Checkpoint review:1');
    // The next process delivers it: the chat shows it, its answer is still on the way.
    const send = w.fake.answerLater('sendMessage', checkpointIn(TEAM.id));
    await w.start();
    await send.arrived;
    const here = await w.message(/Checkpoint review:1/);
    const edit = w.fake.answerLater('editMessageText', checkpointIn(STRANGERS.id));
    expect(await w.answerTo(w.press(BOB, here, 'Approve'))).toMatch(/^Approved/);
    await edit.arrived;
    send.release();
    await until(async () => (await copyIn(TEAM_REF))?.messageRef != null, 'the send confirmed');
    edit.release();
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, here.message_id)).length === 0,
      'the copy to show the decision',
    );
    expect(w.fake.message(TEAM.id, here.message_id)!.text).toMatch(/^✅ Checkpoint review:1/);
  });
});
