/**
 * Issue 29 on Slack, through the whole bridge (`startBridge`, real Bolt against the fake Slack):
 * when a dialog cannot open in time (`expired_trigger_id`) its question goes to the pressed
 * message's thread, and an empty answer there (`@phasebridge` alone) is never silently nothing:
 * - to "Approve with comment" it is a plain approve (the question says so);
 * - to Request changes it is answered out loud in the thread, nothing is decided, and the
 *   question stays open: the next answer there re-runs the step with it.
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { promptFilePath } from '../../src/jobs/runner/agent-argv.ts';
import { OPS, plainMrkdwn, SlackDriver } from '../contracts/drivers/slack.ts';
import { until, waitFor } from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';

let slack: SlackDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  w = await World.create([slack]);
});
afterEach(async () => {
  await w.cleanup();
});

/** Bot messages in the thread under `ts`, as plain text. */
const inThread = (ts: string): string[] =>
  (slack.fake.messages.get(OPS) ?? [])
    .filter((m) => !m.deleted && m.threadTs === ts)
    .map((m) => plainMrkdwn(m.text));

/** Waits until the bridge recorded the question (a person takes longer than that to answer). */
async function asked(what: RegExp): Promise<void> {
  await until(async () => {
    const rows = await w.bridge.repos.audit.listRecent({ outcome: 'allowed' });
    return rows.some((e) => what.test(e.detail ?? ''));
  }, 'the question to be recorded');
}

describe('an empty answer to a question asked in a Slack thread', () => {
  it('approves without a comment when the comment dialog came too late', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    slack.fake.whenCalled('views.open', () => slack.fake.clock.advance(3_001));
    await slack.press('bob', plan, 'Approve with comment');
    const question = await waitFor(
      () => inThread(plan.id).find((t) => /your comment on approving checkpoint plan:1/.test(t)),
      'the question in the checkpoint thread',
    );
    // How to leave it empty is said: a Slack message cannot be empty, a mention alone can.
    expect(question).toContain('Reply in this thread with @');
    expect(question).toMatch(/alone to leave it empty\.$/);
    await asked(/approve of plan:1: asked for the comment/);

    await slack.fake.sendMention({
      user: slack.user('bob'),
      channel: OPS,
      text: '',
      threadTs: plan.id,
    });

    await w.message(slack, /Checkpoint review:1/);
    const decided = await w.settles(slack, plan, (m) => m.buttons.length === 0, 'the decision');
    expect(decided.text).toMatch(/Approved by @bob at /);
    const state = await w.bridge.orchestrator.getRun(runId);
    const vote = state.checkpoints.find((c) => c.id === 'plan:1')?.votes[0];
    expect([vote?.answer, vote?.reason]).toEqual(['approve', undefined]);
    expect(state.feedback ?? []).toEqual([]);
    const logFile = await w.bridge.orchestrator.logPath(runId, 'build', 1);
    const prompt = fs.readFileSync(
      promptFilePath({ logFile, stepId: 'build', attempt: 1 }),
      'utf8',
    );
    expect(prompt).not.toContain('Feedback from reviewers');
  });

  it('is answered out loud for Request changes; the question stays open for the real reason', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    slack.fake.whenCalled('views.open', () => slack.fake.clock.advance(3_001));
    await slack.press('bob', plan, 'Request changes');
    await waitFor(
      () => inThread(plan.id).find((t) => /what should change at checkpoint plan:1/.test(t)),
      'the question in the checkpoint thread',
    );
    await asked(/loop of plan:1: asked for the reason/);

    await slack.fake.sendMention({
      user: slack.user('bob'),
      channel: OPS,
      text: ' ',
      threadTs: plan.id,
    });
    const told = await waitFor(
      () => inThread(plan.id).find((t) => t.startsWith('Your answer was empty')),
      'the answer to the empty reason, in the thread',
    );
    expect(told).toBe(
      `Your answer was empty, so nothing was decided: to request changes at checkpoint plan:1 of run ${runId}, answer the question again with your reason.`,
    );
    const open = await w.bridge.orchestrator.getRun(runId);
    expect([open.status, open.checkpoint?.id]).toEqual(['awaiting', 'plan:1']);

    // The question is still open: Bob's next answer there is the reason, not a command.
    await slack.fake.sendMention({
      user: slack.user('bob'),
      channel: OPS,
      text: 'needs tests for the login form',
      threadTs: plan.id,
    });
    await w.message(slack, /Checkpoint plan:2/);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.feedback?.map((f) => [f.kind, f.text])).toEqual([
      ['changes', 'needs tests for the login form'],
    ]);
  });
});
