/**
 * After a restart, chats whose channel lost its messages (`durableMessages: false`) get the
 * waiting run's status and checkpoint again, with a new token; the lost copy's buttons are void.
 * Telegram stands in for such a platform: its fake still shows the old copy, so it can be pressed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/telegram.ts';
import { BOB, TEAM, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

const STATUS = /^Run \S+ · Demo/;
const PLAN = /Checkpoint plan:1/;

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

const runIdOf = (m: StoredMessage) => /— run (\S+)/.exec(m.text ?? '')![1]!;
const buttonsOf = (m: StoredMessage | undefined) =>
  ((m?.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

async function restartWithPlanOpen(world: World) {
  world.say(BOB, '/run demo add a login page');
  const plan = await world.message(PLAN);
  await world.stop();
  await world.start();
  return { plan, runId: runIdOf(plan) };
}

describe('checkpoints after a restart', () => {
  it('re-posts the status and the checkpoint where messages were lost; old buttons are void', async () => {
    w = await World.create({ forgetMessages: true });
    const world = w;
    const { plan, runId } = await restartWithPlanOpen(world);
    await until(() => world.messages(PLAN).length === 2, 'the checkpoint to be posted again');
    const again = world.messages(PLAN)[1]!;
    expect(buttonsOf(again)).toEqual(['Approve', 'Request changes', 'Reject']);
    const statuses = world.messages(STATUS);
    expect(statuses).toHaveLength(2);
    expect(statuses[1]!.text).toMatch(/✋ waiting for approval/);
    // The status comes first, as when the run was started.
    expect(statuses[1]!.message_id).toBeLessThan(again.message_id);

    expect(await world.answerTo(world.press(BOB, plan, 'Approve'))).toBe(
      'This button is not valid any more.',
    );
    expect((await world.b.orchestrator.getRun(runId)).checkpoint!.votes).toEqual([]);
    const refused = await world.b.repos.audit.listRecent({ action: 'button', outcome: 'refused' });
    expect(refused.map((e) => e.detail)).toEqual([
      expect.stringContaining('superseded checkpoint message'),
    ]);

    expect(await world.answerTo(world.press(BOB, again, 'Approve'))).toBe(
      'Approved — 1 of 1 approval; the run moves on',
    );
    await until(
      () => /Approved by @bob/.test(world.fake.message(TEAM.id, again.message_id)!.text!),
      'the new copy to show the decision',
    );
    expect(buttonsOf(world.fake.message(TEAM.id, again.message_id))).toEqual([]);
    // The lost copy is left alone (on a real forgetful platform it no longer exists).
    expect(world.fake.message(TEAM.id, plan.message_id)!.text).toBe(plan.text);
    // Both copies are marked decided once every copy was edited (the lost one is edited last).
    const list = () => world.b.repos.checkpointMessages.listByCheckpoint(runId, 'plan:1');
    await until(
      async () => (await list()).every((c) => c.state === 'decided'),
      'both copies decided',
    );
    const copies = await list();
    expect(copies.map((c) => c.state)).toEqual(['decided', 'decided']);
    expect(new Set(copies.map((c) => c.buttonToken)).size).toBe(2);
  });

  it('posts nothing again where messages survive the restart', async () => {
    w = await World.create();
    const world = w;
    const { runId } = await restartWithPlanOpen(world);
    // start() has caught up before it returned; a second copy would be there by now.
    expect(world.messages(PLAN)).toHaveLength(1);
    expect(world.messages(STATUS)).toHaveLength(1);
    const copies = await world.b.repos.checkpointMessages.listByCheckpoint(runId, 'plan:1');
    expect(copies).toHaveLength(1);
  });
});
