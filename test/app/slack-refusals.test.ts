/**
 * What Slack refuses on its own, met by the whole bridge (`startBridge`, real Bolt and WebClient
 * against the fake Slack). Time moves on the fake's clock, at the moment a call reaches it:
 * - a status message past the workspace's edit window (`cant_update_message`): a new status
 *   message is posted once, and that one is edited from then on;
 * - a reason dialog opened too late (`expired_trigger_id`): the question is asked in the
 *   checkpoint's thread, and the presser's `@phasebridge <reason>` there decides, also when the
 *   bridge restarted between the question and the answer;
 * - a private answer where Slack takes no ephemeral (`user_not_in_channel`): through the press's
 *   response_url; when that expired too, the presser still gets it, as a message in the channel
 *   naming them;
 * - an event Slack sent again because the ack missed its 3 s: acked, and applied once.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPS, SlackDriver } from '../contracts/drivers/slack.ts';
import { checkpointButtonsOn, until, waitFor } from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';
import { holdsFor } from '../support/slowdown.ts';

const STATUS = /^Run \S+ · Demo/;

let slack: SlackDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  w = await World.create([slack]);
});
afterEach(async () => {
  await w.cleanup();
});

/** Bot messages in OPS whose raw text matches (plain-text posts have no blocks to read). */
const raw = (match: RegExp) =>
  (slack.fake.messages.get(OPS) ?? []).filter((m) => !m.deleted && match.test(m.text));

const failedCalls = (method: string, error: string) =>
  slack.fake.calls.filter((c) => c.method === method && c.error === error);

describe('Slack refusals met by the bridge', () => {
  it('a status message past the edit window: one new status message, edited from then on', async () => {
    slack.fake.api.editWindowMs = 60_000;
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const first = await w.settles(
      slack,
      await w.message(slack, STATUS),
      (m) => /waiting for approval/.test(m.text),
      'the status message to show the checkpoint',
    );

    slack.fake.clock.advance(61_000);
    await slack.press('bob', plan, 'Approve');
    await until(() => w.messages(slack, STATUS).length === 2, 'a new status message');
    const fresh = w.messages(slack, STATUS)[1]!;
    expect(failedCalls('chat.update', 'cant_update_message').length).toBeGreaterThanOrEqual(1);

    const review = await w.message(slack, /Checkpoint review:1/);
    await slack.press('bob', review, 'Approve');
    const done = await w.settles(
      slack,
      fresh,
      (m) => /Completed/.test(m.text),
      'the new status message to be edited to the end',
    );
    expect(done.edited).toBe(true);
    // The old one was left as it was, and no third one was posted.
    expect(w.current(slack, first)!.text).toBe(first.text);
    expect(w.messages(slack, STATUS).map((m) => m.id)).toEqual([first.id, fresh.id]);
    expect(runIdOf(fresh)).toBe(runIdOf(first));
  });

  it('a reason dialog too late: asked in the thread, and the mention there rejects', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    // The bridge got to views.open more than 3 s after the press, as Slack measures it.
    slack.fake.whenCalled('views.open', () => slack.fake.clock.advance(3_001));
    const press = await slack.press('bob', plan, 'Reject');
    expect(await slack.answerTo(press)).toBe(
      'Reply to the prompt below with your reason to reject.',
    );
    const prompt = await waitFor(
      () => raw(/why do you reject/).find((m) => m.threadTs === plan.id),
      'the question in the checkpoint thread',
    );
    expect(prompt.text).toContain(`<@${slack.userId('bob')}> why do you reject checkpoint plan:1`);
    expect(prompt.text).toContain(`<@${slack.fake.workspace.botUserId}>`);
    expect(failedCalls('views.open', 'expired_trigger_id')).toHaveLength(1);
    expect(slack.fake.views).toEqual([]);
    // Bob answers once the bridge recorded the question (a person takes longer than that).
    await until(async () => {
      const notes = await w.bridge.repos.audit.listRecent({ outcome: 'allowed' });
      return notes.some((e) => /asked for the reason/.test(e.detail ?? ''));
    }, 'the question to be recorded');

    // Someone else's mention in the thread is not Bob's answer.
    await slack.fake.sendMention({
      user: slack.user('alice'),
      channel: OPS,
      text: 'status',
      threadTs: plan.id,
    });
    const delivery = await slack.fake.sendMention({
      user: slack.user('bob'),
      channel: OPS,
      text: 'needs tests first',
      threadTs: plan.id,
    });
    expect(delivery.status).toBe(200);
    // A mention carries Bob's user id only (Slack sends no name with an event): he is named as
    // he was last seen, by his press on Reject (issue 29, bridge.db's people).
    await w.message(slack, /❌ Run \S+ Failed: rejected by @bob: needs tests first/);
    const closed = await w.settles(slack, plan, (m) => m.buttons.length === 0, 'the decision');
    expect(closed.text).toContain('Reason given: needs tests first');
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.status).toBe('failed');
    expect(state.checkpoints[0]!.decision).toMatchObject({ reason: 'needs tests first' });
  });

  it('a reason asked in the thread survives a restart: the answer after it re-runs the step', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    slack.fake.whenCalled('views.open', () => slack.fake.clock.advance(3_001));
    const press = await slack.press('bob', plan, 'Request changes');
    expect(await slack.answerTo(press)).toBe('Reply to the prompt below with what should change.');
    await waitFor(
      () => raw(/what should change at checkpoint plan:1/).find((m) => m.threadTs === plan.id),
      'the question in the checkpoint thread',
    );
    await until(async () => {
      const notes = await w.bridge.repos.audit.listRecent({ outcome: 'allowed' });
      return notes.some((e) => /loop of plan:1: asked for the reason/.test(e.detail ?? ''));
    }, 'the question to be recorded');

    await w.restart();
    await slack.fake.sendMention({
      user: slack.user('bob'),
      channel: OPS,
      text: 'needs tests for the login form',
      threadTs: plan.id,
    });

    // The answer is the reason: the step runs again with it (not a command, not guidance).
    await w.message(slack, /Checkpoint plan:2/);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.feedback?.map((f) => [f.kind, f.by.id, f.text])).toEqual([
      ['changes', `slack:${slack.userId('bob')}`, 'needs tests for the login form'],
    ]);
    const log = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
    expect(log).toMatch(/\(changes, .+\): needs tests for the login form/);
    const closed = await w.settles(slack, plan, (m) => m.buttons.length === 0, 'the decision');
    expect(closed.text).toContain('Reason given: needs tests for the login form');
    expect(raw(/Unknown command|not a command/i)).toEqual([]);
    const commands = await w.bridge.repos.audit.listRecent({ action: 'command:needs' });
    expect(commands).toEqual([]);
  });

  it('a private answer to someone not in the channel goes through the response_url, privately', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    // Carol is not a member of the channel: Slack takes no ephemeral to her there.
    slack.fake.api.channels.setMembers(
      OPS,
      ['alice', 'bob', 'dave'].map((p) => `U0${p.toUpperCase()}`),
    );
    await slack.press('carol', plan, 'Approve');
    const [response] = await slack.fake.waitForResponses(1);
    expect(response!.body).toMatchObject({
      response_type: 'ephemeral',
      replace_original: false,
      text: 'You are not allowed to answer checkpoints here.',
    });
    expect(failedCalls('chat.postEphemeral', 'user_not_in_channel')).toHaveLength(1);
    // Nothing about it in the channel; the checkpoint is still open.
    expect(raw(/not allowed to answer/)).toEqual([]);
    expect(w.current(slack, plan)!.buttons).toEqual(checkpointButtonsOn(slack));
  });

  it('a private answer with no ephemeral and an expired response_url: said in the channel, once however often pressed', async () => {
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    // Carol is not in the channel (no ephemeral to her); 31 minutes pass before the answer.
    slack.fake.api.channels.setMembers(
      OPS,
      ['alice', 'bob', 'dave'].map((p) => `U0${p.toUpperCase()}`),
    );
    slack.fake.whenCalled('chat.postEphemeral', () => slack.fake.clock.advance(31 * 60_000));
    await slack.press('carol', plan, 'Approve');
    const said = await waitFor(
      () => raw(/not allowed to answer/)[0],
      'the answer, addressed to Carol in the channel',
    );
    // Shown with Carol's mention (the blocks); the notification text names her id.
    expect(JSON.stringify(said.blocks)).toContain(
      `<@${slack.userId('carol')}> You are not allowed to answer checkpoints here.`,
    );
    expect(failedCalls('chat.postEphemeral', 'user_not_in_channel')).toHaveLength(1);
    expect(slack.fake.refusedResponses).toEqual([
      expect.objectContaining({ status: 404, body: '{"ok":false,"error":"expired_url"}' }),
    ]);
    expect(slack.fake.responses).toEqual([]);
    // Pressed again for the same answer: it went through the outbox keyed, so it is not said twice.
    slack.fake.whenCalled('chat.postEphemeral', () => slack.fake.clock.advance(31 * 60_000));
    await slack.press('carol', plan, 'Approve');
    await until(
      () => failedCalls('chat.postEphemeral', 'user_not_in_channel').length === 2,
      'the second press answered',
    );
    await until(() => slack.fake.refusedResponses.length === 2, 'the second response_url tried');
    await holdsFor(() => raw(/not allowed to answer/).length === 1, 1000, 'said twice');
    const db = new Database(path.join(w.home, 'bridge.db'), { readonly: true });
    const keyed = db.prepare(`select state from outbox where dedupe_key like 'press:%'`).all();
    db.close();
    expect(keyed).toEqual([{ state: 'confirmed' }]);
  });

  it('an event Slack sends again after a missed ack is acked and applied once', async () => {
    const sending = slack.fake.sendMention({
      user: slack.user('alice'),
      channel: OPS,
      text: 'run demo add login',
    });
    // Three seconds pass on Slack's side before the bridge's ack can reach it: Slack retries.
    slack.fake.clock.advance(3_001);
    const first = await sending;
    const attempts = await slack.fake.waitForAttempts(first.request, 2);
    expect(attempts.map((a) => [a.retryNum, a.retryReason, a.timedOut, a.status])).toEqual([
      [0, undefined, true, 200],
      [1, 'http_timeout', false, 200],
    ]);
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    // A later command is answered after the retry was handled.
    await slack.sendCommand('alice', 'runs');
    expect((await w.message(slack, /^Recent runs:/)).text).toContain(runId);
    expect((await w.bridge.orchestrator.listRuns()).map((r) => r.id)).toEqual([runId]);
    expect(w.messages(slack, STATUS)).toHaveLength(1);
    expect(w.messages(slack, /Checkpoint plan:1/)).toHaveLength(1);
    const audit = await w.bridge.repos.audit.listRecent({ action: 'command:run' });
    expect(audit.map((e) => e.outcome)).toEqual(['allowed']);
  });
});
