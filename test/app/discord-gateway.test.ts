/**
 * Discord dropping the gateway session in the middle of a run, from the fake gateway's own state,
 * through the whole bridge (`startBridge`, real discord.js): op 7 Reconnect, op 9 Invalid Session
 * (resumable or not) and a zombie connection (heartbeats no longer acknowledged). After each, the
 * bridge is connected again (RESUME, or a new IDENTIFY for a session that cannot resume) and
 * what people do still reaches it: the press on the checkpoint decides and the run moves on.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from '../contracts/drivers/discord.ts';
import { runIdOf, World } from '../contracts/world.ts';
import type { FakeDiscord } from '../fakes/discord.ts';

let discord: DiscordDriver;
let w: World;

beforeEach(async () => {
  // Quick heartbeats, so a zombie connection is noticed within a test.
  discord = await DiscordDriver.start({ heartbeatIntervalMs: 200 });
  w = await World.create([discord]);
});
afterEach(async () => {
  await w.cleanup();
});

const FAULTS: {
  what: string;
  cause: (fake: FakeDiscord) => void;
  /** At least this many RESUMEs, and exactly this many IDENTIFYs in all. */
  resumes: number;
  identifies: number;
}[] = [
  { what: 'op 7 Reconnect', cause: (f) => f.gateway.requestReconnect(), resumes: 1, identifies: 1 },
  {
    what: 'op 9 Invalid Session (resumable)',
    cause: (f) => f.gateway.invalidateSession(true),
    resumes: 1,
    identifies: 1,
  },
  {
    what: 'op 9 Invalid Session (not resumable)',
    cause: (f) => f.gateway.invalidateSession(false),
    resumes: 0,
    identifies: 2,
  },
  { what: 'a zombie connection', cause: (f) => f.gateway.goZombie(), resumes: 1, identifies: 1 },
];

describe.each(FAULTS)('Discord gateway: $what during a run', (fault) => {
  it('connects again, and a press after it decides the checkpoint', async () => {
    const { fake } = discord;
    await discord.sendCommand('alice', 'run demo add login');
    const plan = await w.message(discord, /Checkpoint plan:1/);
    const runId = runIdOf(plan);

    fault.cause(fake);
    // Discord allows one IDENTIFY per 5 s: a new session may take that long.
    await fake.waitFor(
      () => fake.gateway.resumes >= fault.resumes && fake.gateway.identifies === fault.identifies,
      'the session back',
      8000,
    );

    await discord.press('bob', plan, 'Approve');
    await w.message(discord, /Checkpoint review:1/);
    const decided = await w.settles(discord, plan, (m) => m.buttons.length === 0, 'the decision');
    expect(decided.text).toMatch(/Approved by .+ at /);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.checkpoints[0]!.decision?.answer).toBe('approve');
    // A new IDENTIFY only for a session that cannot resume (a slow host may resume once more:
    // a late heartbeat ACK looks like a zombie connection).
    expect(fake.gateway.identifies).toBe(fault.identifies);
    expect(fake.gateway.resumes).toBeGreaterThanOrEqual(fault.resumes);
  });
});
