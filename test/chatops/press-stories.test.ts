/**
 * Checkpoint button presses, end to end through the Telegram adapter: who may press, four-eyes,
 * second votes, forged and stale tokens, and a press after the bridge restarted.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plainTextOf } from '../../src/bridges/render-text.ts';
import type { StoredMessage } from '../fakes/telegram.ts';
import { ALICE, BOB, CAROL, DAVE, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

const runIdOf = (m: StoredMessage) => /— run (\S+)/.exec(m.text ?? '')![1]!;
const buttonsOf = (m: StoredMessage | undefined) =>
  ((m?.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

async function planCheckpoint(): Promise<{ plan: StoredMessage; runId: string }> {
  w.say(ALICE, '/run demo add a login page');
  const plan = await w.message(/Checkpoint plan:1/);
  return { plan, runId: runIdOf(plan) };
}

describe('checkpoint presses', () => {
  it('refuses a press without the approver role, privately and without changing anything', async () => {
    const { plan, runId } = await planCheckpoint();
    for (const who of [CAROL, ALICE]) {
      expect(await w.answerTo(w.press(who, plan, 'Approve'))).toBe(
        'You are not allowed to answer checkpoints here.',
      );
    }
    const state = await w.b.orchestrator.getRun(runId);
    expect(state.status).toBe('awaiting');
    expect(state.checkpoint!.votes).toEqual([]);
    expect(buttonsOf(w.fake.message(TEAM.id, plan.message_id))).toEqual([
      'Approve',
      'Request changes',
      'Reject',
    ]);
    const refused = await w.b.repos.audit.listRecent({ action: 'button', outcome: 'refused' });
    expect(refused.map((e) => e.actor).sort()).toEqual([
      `telegram:${ALICE.id}`,
      `telegram:${CAROL.id}`,
    ]);
    expect(refused.every((e) => e.chatRef === TEAM_REF)).toBe(true);
  });

  it('tells a second presser the checkpoint was already approved, by whom', async () => {
    const { plan, runId } = await planCheckpoint();
    // Both press before either press is handled (the second sees the buttons too).
    const first = w.press(BOB, plan, 'Approve');
    const second = w.press(DAVE, plan, 'Approve');
    expect(await w.answerTo(first)).toBe('Approved — 1 of 1 approval; the run moves on');
    expect(await w.answerTo(second)).toBe('Checkpoint plan:1 already approved by @bob');
    const state = await w.runState(runId, (s) => s.checkpoints.length === 1, 'the decision');
    expect(state.checkpoints[0]!.votes.map((v) => v.actor.name)).toEqual(['@bob']);
  });

  it('applies four-eyes and refuses a second vote, passing the engine’s words on', async () => {
    fs.mkdirSync(path.join(w.workspace, 'workflows'));
    fs.writeFileSync(
      path.join(w.workspace, 'workflows', 'gated.workflow.yaml'),
      `id: gated
name: Gated
steps:
  - id: build
    agent: demo
    prompt: build it
    checkpoint:
      when: after
      approvals: 2
      fourEyes: true
      expiresIn: 2h
      onExpiry: reject
`,
    );
    w.say(DAVE, '/run gated ship the thing');
    const cp = await w.message(/Checkpoint build:1/);
    expect(cp.text).toContain(
      'Policy: needs 2 approvals, not from the requester; expires in 2 h, then rejected',
    );
    expect(await w.answerTo(w.press(DAVE, cp, 'Approve'))).toMatch(
      /^Four-eyes rule: @dave started this run and cannot approve checkpoint build:1/,
    );
    expect(await w.answerTo(w.press(BOB, cp, 'Approve'))).toBe('Approved — 1 of 2 approvals');
    await until(
      () =>
        /Votes: approved by @bob \(1 of 2 approvals\)/.test(
          w.fake.message(TEAM.id, cp.message_id)!.text!,
        ),
      'the vote to show',
    );
    expect(buttonsOf(w.fake.message(TEAM.id, cp.message_id))).toEqual([
      'Approve',
      'Request changes',
      'Reject',
    ]);
    expect(await w.answerTo(w.press(BOB, cp, 'Approve'))).toBe(
      '@bob already voted on checkpoint build:1',
    );
    expect(await w.answerTo(w.press(BOB, cp, 'Reject'))).toBe(
      '@bob already voted on checkpoint build:1',
    );
    expect((await w.b.orchestrator.getRun(runIdOf(cp))).checkpoint!.votes).toHaveLength(1);
  });

  it('does nothing for a forged token, a token moved to another message, or a stale button', async () => {
    const { plan, runId } = await planCheckpoint();
    const real = (plan.replyMarkup!.inline_keyboard as { callback_data: string }[][])[0]![0]!
      .callback_data;
    // Buttons the bot never issued for that message: a made-up token, and the real one elsewhere.
    await w.b.channel.send(TEAM_REF, {
      text: [{ kind: 'plain', text: 'decoy' }],
      buttons: [
        { id: 'AAAAAAAAAAAAAAAAAAAAAA.a', label: 'Forged' },
        { id: real, label: 'Moved' },
      ],
    });
    const decoy = await w.message(/^decoy$/);
    for (const label of ['Forged', 'Moved']) {
      expect(await w.answerTo(w.press(BOB, decoy, label))).toBe(
        'This button is not valid any more.',
      );
    }
    expect((await w.b.orchestrator.getRun(runId)).checkpoint!.votes).toEqual([]);

    const keyboard = plan.replyMarkup;
    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toMatch(/^Approved/);
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, plan.message_id)).length === 0,
      'the buttons to go',
    );
    // A client that still shows the old keyboard presses it.
    w.fake.message(TEAM.id, plan.message_id)!.replyMarkup = keyboard!;
    expect(await w.answerTo(w.press(DAVE, plan, 'Reject'))).toBe(
      'Checkpoint plan:1 already approved by @bob',
    );
    const state = await w.b.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.decision!.answer).toBe('approve');
    expect(state.status).not.toBe('failed');
    const refused = await w.b.repos.audit.listRecent({ action: 'button', outcome: 'refused' });
    expect(refused).toHaveLength(2);
  });

  it('still works on a message posted before the bridge restarted', async () => {
    const { plan, runId } = await planCheckpoint();
    await w.stop();
    await w.start();
    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toBe(
      'Approved — 1 of 1 approval; the run moves on',
    );
    await w.runState(
      runId,
      (s) => s.steps[0]!.status === 'completed' && s.cursor > 0,
      'the run to move on',
    );
    await until(
      () => /Approved by @bob/.test(w.fake.message(TEAM.id, plan.message_id)!.text!),
      'the copy to show the decision',
    );
    // The review checkpoint of the same run reaches the chat from the new bridge.
    const review = await w.message(/Checkpoint review:1/);
    expect(buttonsOf(review)).toEqual(['Approve', 'Request changes', 'Reject']);
  });

  it('through the outbox: in the chat of /run, its status, answer, checkpoint and the press’s edit are interactive; no 429', async () => {
    await w.cleanup();
    w = await World.create({ outbox: true });
    const { plan, runId } = await planCheckpoint();
    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toBe(
      'Approved — 1 of 1 approval; the run moves on',
    );
    await until(
      () => /Approved by @bob/.test(w.fake.message(TEAM.id, plan.message_id)!.text!),
      'the copy to show the decision',
    );
    const rows = w.b.db.sqlite
      .prepare('select kind, target, urgency, payload_json from outbox where lane = ? order by id')
      .all(TEAM_REF) as { kind: string; target: string; urgency: string; payload_json: string }[];
    const what = (r: (typeof rows)[number]) => {
      const json = r.payload_json;
      if (r.kind === 'edit' && r.target.endsWith(`/${plan.message_id}`)) return 'press edit';
      if (json.includes('Checkpoint plan:1')) return 'checkpoint';
      if (json.includes('💬 plan')) return 'answer';
      return `status ${r.kind}`;
    };
    // In the chat of /run, the person waits for the status message, the answer and the
    // checkpoint; then for the edit of the message they pressed. Status edits keep their place.
    const labelled = rows.map((r) => [what(r), r.urgency]);
    expect(labelled[0]).toEqual(['status send', 'interactive']);
    expect(labelled.filter(([w]) => !w!.startsWith('status'))).toEqual([
      ['answer', 'interactive'],
      ['checkpoint', 'interactive'],
      ['press edit', 'interactive'],
    ]);
    expect(labelled.filter(([w]) => w === 'status edit').map(([, u]) => u)).not.toContain(
      'interactive',
    );
    const edit = JSON.parse(rows.find((r) => what(r) === 'press edit')!.payload_json);
    expect(plainTextOf(edit.text)).toContain('Approved by @bob');
    expect(w.fake.calls.filter((c) => c.errorCode === 429)).toEqual([]);
    await w.runState(runId, (s) => s.cursor > 0, 'the run to move on');
  });
});
