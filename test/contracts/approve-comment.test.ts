/**
 * Issue 29: "Approve with comment" on the platforms with modals (real Bolt and discord.js against
 * the fakes). The button opens a modal with an optional multi-line field; the comment goes to the
 * next step exactly as `approve --comment` does (the vote's reason, an approval feedback entry,
 * the next attempt's prompt file); an empty comment is a plain approve.
 */
import fs from 'node:fs';
import { beforeEach, describe, expect, it } from 'vitest';
import { promptFilePath } from '../../src/jobs/runner/agent-argv.ts';
import { DiscordDriver } from './drivers/discord.ts';
import { OPS, SlackDriver } from './drivers/slack.ts';
import type { PlatformDriver } from './platform-driver.ts';
import type { ContractSubject } from './stories.ts';
import { runIdOf, World } from './world.ts';

const COMMENT = 'use the session API\nand keep the form small';

/** A bot message as the platform stores it (markup and mentions unrendered). */
function rawText(d: PlatformDriver, id: string): string {
  if (d instanceof SlackDriver) return JSON.stringify(d.fake.message(OPS, id)?.blocks);
  if (d instanceof DiscordDriver) return JSON.stringify(d.fake.state.messages.get(id)?.embeds);
  throw new Error(`no raw text for ${d.platform}`);
}

function approveWithCommentStories(subject: ContractSubject): void {
  let d: PlatformDriver;
  let w: World;

  beforeEach(async () => {
    d = await subject.start();
    w = await World.create([d]);
    return () => w.cleanup();
  });

  /** The exact prompt build's first attempt was given. */
  const buildPrompt = async (runId: string): Promise<string> => {
    const logFile = await w.bridge.orchestrator.logPath(runId, 'build', 1);
    return fs.readFileSync(promptFilePath({ logFile, stepId: 'build', attempt: 1 }), 'utf8');
  };

  it('a comment typed in the modal reaches the next step’s prompt with the approval', async () => {
    await d.sendCommand('alice', 'run demo add login');
    const plan = await w.message(d, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    const press = await d.press('bob', plan, 'Approve with comment');
    expect(await d.answerTo(press)).toContain('Write your comment in the dialog');
    await d.replyReason(press, COMMENT);

    await w.message(d, /Checkpoint review:1/);
    const decided = await w.settles(d, plan, (m) => m.buttons.length === 0, 'the buttons to go');
    expect(decided.text).toMatch(new RegExp(`Approved by ${d.displayName('bob')} at `));
    // As the platform's own mention of bob (its client shows his name), not a name typed in.
    expect(rawText(d, plan.id)).toContain(`Approved by <@${d.userId('bob')}> at `);
    expect(decided.text).toContain('use the session API');
    // The same facts `approve --comment` writes: the vote's reason and an approval entry for build.
    const state = await w.bridge.orchestrator.getRun(runId);
    const vote = state.checkpoints.find((c) => c.id === 'plan:1')?.votes[0];
    expect([vote?.answer, vote?.reason]).toEqual(['approve', COMMENT]);
    expect(state.feedback?.map((f) => [f.kind, f.stepId, f.forAttempt, f.text])).toEqual([
      ['approval', 'build', 1, COMMENT],
    ]);
    // Under the reviewers' feedback, by its author, the second line indented under the first.
    expect(await buildPrompt(runId)).toMatch(
      /## Feedback from reviewers\n\n- .+ \(approved with a note, .+\): use the session API\n\s+and keep the form small/,
    );
  });

  it('an empty comment is a plain approve: the next step runs without one', async () => {
    await d.sendCommand('alice', 'run demo add login');
    const plan = await w.message(d, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    const press = await d.press('bob', plan, 'Approve with comment');
    await d.answerTo(press);
    await d.replyReason(press, '');

    await w.message(d, /Checkpoint review:1/);
    const state = await w.bridge.orchestrator.getRun(runId);
    const vote = state.checkpoints.find((c) => c.id === 'plan:1')?.votes[0];
    expect(vote?.answer).toBe('approve');
    expect(vote?.reason).toBeUndefined();
    expect(state.feedback ?? []).toEqual([]);
    const prompt = await buildPrompt(runId);
    expect(prompt).toContain('Build the change following the approved plan.');
    expect(prompt).not.toContain('Feedback from reviewers');
  });
}

describe('Approve with comment', () => {
  describe('Slack', () => approveWithCommentStories({ start: () => SlackDriver.start() }));
  describe('Discord', () => approveWithCommentStories({ start: () => DiscordDriver.start() }));
});
