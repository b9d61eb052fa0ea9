/**
 * Slack ending a Socket Mode connection in the middle of a run, from the fake's own state,
 * through the whole bridge (`startBridge` with SLACK_APP_TOKEN, real Bolt and
 * @slack/socket-mode): a `disconnect` message (`refresh_requested`), or the socket dropped. The
 * bridge opens a new connection (apps.connections.open again) and what people do still reaches
 * it over the socket: the press on the checkpoint decides and the run moves on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SlackDriver } from '../contracts/drivers/slack.ts';
import { until } from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';
import type { FakeSlack } from '../fakes/slack.ts';

let slack: SlackDriver;
let w: World;

beforeEach(async () => {
  slack = await SlackDriver.start();
  w = await World.create([slack], { env: { SLACK_APP_TOKEN: slack.fake.appToken } });
  // Nothing reaches the bridge's HTTP route: everything comes over the socket.
  slack.fake.target = 'http://127.0.0.1:9/never';
});
afterEach(async () => {
  await w.cleanup();
});

const FAULTS = [
  { what: 'disconnect (refresh_requested)', cause: (f: FakeSlack) => f.requestSocketRefresh() },
  { what: 'a dropped socket', cause: (f: FakeSlack) => f.dropSocket() },
];

describe.each(FAULTS)('Slack Socket Mode: $what during a run', (fault) => {
  it('connects again, and a press after it decides the checkpoint', async () => {
    const { fake } = slack;
    await slack.sendCommand('alice', 'run demo add login');
    const plan = await w.message(slack, /Checkpoint plan:1/);
    const runId = runIdOf(plan);
    expect(fake.okCalls('apps.connections.open')).toHaveLength(1);

    fault.cause(fake);
    await until(
      () => fake.okCalls('apps.connections.open').length === 2 && fake.socketConnected,
      'a new connection',
    );

    const press = await slack.press('bob', plan, 'Approve');
    expect(await slack.answerTo(press)).toMatch(/approved/i);
    await w.message(slack, /Checkpoint review:1/);
    const decided = await w.settles(slack, plan, (m) => m.buttons.length === 0, 'the decision');
    expect(decided.text).toMatch(/Approved by .+ at /);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.decision?.answer).toBe('approve');
  });
});
