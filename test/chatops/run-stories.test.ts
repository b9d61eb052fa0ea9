/**
 * Stories of issue 5 around a run, end to end: Telegram (fake Bot API) → adapter → ChatOps →
 * Orchestrator → demo agent, and back.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, BOB, CAROL, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

const STATUS = /^Run \S+ · Demo/;
const runIdOf = (text: string | undefined) => /Run (\S+)/.exec(text ?? '')![1]!;
const keyboard = (m: { replyMarkup?: Record<string, unknown> }) =>
  ((m.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

describe('a run driven from a chat', () => {
  it('starts with /run, edits one status message in place, posts the checkpoint, moves on when approved and tells the chat it completed', async () => {
    w.say(ALICE, '/run demo add a login page');
    const status = await w.message(STATUS);
    const runId = runIdOf(status.text);
    const run = await w.b.orchestrator.getRun(runId);
    expect(run.spec).toBe('add a login page');
    expect(run.startedBy).toEqual({ id: `telegram:${ALICE.id}`, name: '@alice' });

    const plan = await w.message(/Checkpoint plan:1/);
    expect(plan.text).toContain('Step: after step plan');
    expect(plan.text).toContain('Policy: needs 1 approval');
    expect(plan.text).toMatch(/Logs: .*plan/);
    expect(plan.text).toContain('Last output of plan:');
    expect(keyboard(plan)).toEqual(['Approve', 'Request changes', 'Reject']);
    // The status message was edited (not re-sent) to show the plan done and the wait.
    await until(
      () =>
        /✅ plan[\s\S]*✋ waiting for approval/.test(
          w.fake.message(TEAM.id, status.message_id)!.text!,
        ),
      'the status message to show the checkpoint',
    );
    expect(w.fake.message(TEAM.id, status.message_id)!.edits).toBeGreaterThan(0);

    const press = w.press(BOB, plan, 'Approve');
    expect(await w.answerTo(press)).toBe('Approved — 1 of 1 approval; the run moves on');
    await until(
      () => keyboard(w.fake.message(TEAM.id, plan.message_id)!).length === 0,
      'the buttons to go',
    );
    expect(w.fake.message(TEAM.id, plan.message_id)!.text).toMatch(
      /✅ Checkpoint plan:1 — run \S+\nApproved by @bob at \d{4}-\d\d-\d\d \d\d:\d\d UTC/,
    );

    const review = await w.message(/Checkpoint review:1/);
    expect(keyboard(review)).toEqual(['Approve', 'Request changes', 'Reject']);
    expect(await w.answerTo(w.press(BOB, review, 'Approve'))).toMatch(/^Approved/);
    await w.message(/^🏁 Run \S+ Completed/);
    expect(w.messages(STATUS)).toHaveLength(1);
    expect(w.fake.message(TEAM.id, status.message_id)!.text).toMatch(/Completed[\s\S]*✅ review/);
  });

  it('takes the replied-to message as the spec, and acts once on a duplicate delivery', async () => {
    const spec = w.say(CAROL, 'Please add a dark mode toggle\nwith a settings entry');
    const update = w.say(ALICE, '/run demo', TEAM, World.messageIdOf(spec));
    const status = await w.message(STATUS);
    const runId = runIdOf(status.text);
    expect((await w.b.orchestrator.getRun(runId)).spec).toBe(
      'Please add a dark mode toggle\nwith a settings entry',
    );
    w.fake.pushUpdate({ message: update.message });
    // Updates are handled in order: once /runs is answered, the duplicate was handled too.
    w.say(ALICE, '/runs');
    const runs = await w.message(/^Recent runs:/);
    expect(runs.text).toContain(runId);
    expect((await w.b.orchestrator.listRuns()).map((r) => r.id)).toEqual([runId]);
    expect(w.messages(STATUS)).toHaveLength(1);
    const audit = await w.b.repos.audit.listRecent({ action: 'command:run' });
    expect(audit.map((e) => e.outcome)).toEqual(['allowed']);
  });

  it('rejects with the reason given in a reply to the prompt', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const runId = /— run (\S+)/.exec(plan.text!)![1]!;
    expect(await w.answerTo(w.press(BOB, plan, 'Reject'))).toBe(
      'Reply to the prompt below with your reason to reject.',
    );
    const prompt = await w.message(/why do you reject checkpoint plan:1/);
    expect(prompt.replyMarkup).toMatchObject({ force_reply: true, selective: true });
    // Someone else's reply to Bob's prompt does not count, and she is told so (issue 29).
    w.fake.userReplies({ chatId: TEAM.id, messageId: prompt.message_id, from: CAROL, text: 'lol' });
    expect((await w.message(/^That question about run/)).text).toBe(
      `That question about run ${runId} is for @bob; your reply was not passed on. To guide the run, reply to its status or checkpoint message.`,
    );
    // An hour on, Bob's answer finds the question expired: he is told, nothing is decided.
    w.b.db.sqlite.prepare('UPDATE reason_prompts SET expires_at = 1').run();
    w.fake.userReplies({ chatId: TEAM.id, messageId: prompt.message_id, from: BOB, text: 'late' });
    expect((await w.message(/^That question about run \S+ expired/)).text).toBe(
      `That question about run ${runId} expired, so your answer decided nothing: press the button again to answer.`,
    );
    expect((await w.b.orchestrator.getRun(runId)).status).toBe('awaiting');
    await w.answerTo(w.press(BOB, plan, 'Reject'));
    await until(
      () => w.messages(/why do you reject checkpoint plan:1/).length === 2,
      'asked again',
    );
    w.fake.userReplies({
      chatId: TEAM.id,
      messageId: w.messages(/why do you reject checkpoint plan:1/).at(-1)!.message_id,
      from: BOB,
      text: 'needs tests first',
    });
    await w.message(/^❌ Run \S+ Failed: rejected by @bob: needs tests first/);
    const state = await w.b.orchestrator.getRun(runId);
    expect(state.status).toBe('failed');
    expect(state.checkpoints.at(-1)!.votes.map((v) => v.actor.id)).toEqual([`telegram:${BOB.id}`]);
    const edited = w.fake.message(TEAM.id, plan.message_id)!;
    expect(edited.text).toMatch(/❌ Checkpoint plan:1 — run \S+\nRejected by @bob at /);
    expect(edited.text).toContain('Reason given: needs tests first');
    expect(keyboard(edited)).toEqual([]);
    const rows = await w.b.repos.checkpointMessages.listByCheckpoint(runId, 'plan:1');
    expect(rows.map((r) => r.state)).toEqual(['decided']);
  });

  it('answers status, cancels on command and announces the cancel', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const runId = /— run (\S+)/.exec(plan.text!)![1]!;
    w.say(CAROL, '/status');
    expect((await w.message(/not allowed/)).text).toBe('You are not allowed to use status here.');
    w.say(ALICE, '/status');
    await until(() => w.messages(STATUS).length === 2, 'the status answer');
    w.say(ALICE, `/cancel ${runId} wrong spec`);
    expect((await w.message(/^Cancelled run/)).text).toBe(`Cancelled run ${runId}.`);
    await w.message(/^🛑 Run \S+ Cancelled by @alice: wrong spec/);
    // The open checkpoint was withdrawn: its copy loses the buttons.
    await until(
      () => keyboard(w.fake.message(TEAM.id, plan.message_id)!).length === 0,
      'the buttons to go',
    );
    expect(w.fake.message(TEAM.id, plan.message_id)!.text).toContain('Withdrawn');
    const entries = await w.b.repos.audit.listRecent({ actor: `telegram:${CAROL.id}` });
    expect(entries[0]).toMatchObject({
      action: 'command:status',
      outcome: 'refused',
      chatRef: TEAM_REF,
    });
  });
});
