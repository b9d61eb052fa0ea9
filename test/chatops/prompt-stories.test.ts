/**
 * Issue 29 through Telegram (fake Bot API → adapter → ChatOps → Orchestrator → demo agent): a
 * guidance reply at a checkpoint is acknowledged with where it goes, counted on the checkpoint,
 * and reaches the next step's agent with the approval; `prompt <run> <step>` shows the exact
 * prompt that agent was given, note included.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, BOB, TEAM, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

const runIdOf = (text: string | undefined) => /run (\S+)/.exec(text ?? '')![1]!;

describe('notes and the prompt on record', () => {
  it('goes to the next step’s agent, and `prompt` shows what that agent was told', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const runId = runIdOf(plan.text);
    w.say(ALICE, 'hash passwords with bcrypt', TEAM, plan.message_id);
    await w.message(
      /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/,
    );
    await until(
      () =>
        (w.fake.message(TEAM.id, plan.message_id)?.text ?? '').includes(
          'Notes: 1 note from @alice will go with the decision',
        ),
      'the checkpoint to count the note',
    );
    expect(await w.answerTo(w.press(BOB, plan, 'Approve'))).toMatch(/^Approved/);
    await w.message(/Checkpoint review:1/);

    w.say(ALICE, `/prompt ${runId} build`);
    const shown = await w.message(/^Prompt of build, attempt 1 — run /);
    expect(shown.text).toContain('Build the change following the approved plan.');
    expect(shown.text).toMatch(
      /## Feedback from reviewers\n\n- @alice \(guidance, .+\): hash passwords with bcrypt/,
    );
    w.say(ALICE, `/prompt ${runId} plan`);
    const planPrompt = await w.message(/^Prompt of plan, attempt 1 — run /);
    expect(planPrompt.text).not.toContain('bcrypt');
    w.say(ALICE, `/prompt ${runId} nosuch`);
    await w.message(/has no step nosuch/);
  });

  it('sends a long prompt as a file', async () => {
    w.say(ALICE, '/run demo add a login page');
    const plan = await w.message(/Checkpoint plan:1/);
    const runId = runIdOf(plan.text);
    const long = `use these rules: ${'keep every function short and named. '.repeat(90)}`;
    w.say(ALICE, long, TEAM, plan.message_id);
    await w.message(/^Noted: /);
    w.say(BOB, `/changes ${runId} follow the rules`);
    await w.message(/Checkpoint plan:2/);
    w.say(ALICE, `/prompt ${runId} plan`);
    const file = await until(
      () => w.fake.botMessages(TEAM.id).some((m) => m.document !== undefined),
      'the prompt as a file',
    ).then(() => w.fake.botMessages(TEAM.id).find((m) => m.document !== undefined)!);
    expect(file.document!.fileName).toBe('prompt-plan-2.md');
    const sent = Buffer.from(file.document!.data).toString('utf8');
    expect(sent).toMatch(/^Plan the change described in the specification/);
    expect(sent).toContain('keep every function short and named.');
    expect(sent).toMatch(/\(requested changes, .+\): follow the rules\n$/);
    expect(file.caption).toMatch(
      /^Prompt of plan, attempt 2 — run \S+ \(\d+ characters\): attached\.$/,
    );
  });
});
