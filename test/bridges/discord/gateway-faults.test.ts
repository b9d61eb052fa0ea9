/**
 * What Discord does to a gateway connection on its own, from the fake gateway, with the real
 * discord.js client the adapter runs: op 7 Reconnect → reconnect and RESUME; op 9 resumable →
 * RESUME; op 9 not resumable → a new IDENTIFY; heartbeats no longer acknowledged (a zombie
 * connection) → drop it and RESUME. After each, slash commands still reach phasebridge.
 * discord.js does the work; these tests check it does it against Discord's protocol.
 *
 * Only the zombie test shortens the heartbeat (the others do not need one), to 1 s: discord.js
 * calls a connection whose last heartbeat is not acknowledged when the next is due a zombie, so
 * a 200 ms interval made the tests depend on the process never being held up for 200 ms; at load
 * 28 the zombie test saw a second IDENTIFY after such churn.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from './support.ts';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A slash command sent now reaches the adapter's handler (the session delivers again). */
async function stillDelivers(name: string): Promise<void> {
  const alice = h!.fake.state.user('alice');
  h!.fake.slashCommand(alice, h!.fake.state.text, name);
  const event = await h!.inbox.next();
  expect(event.kind === 'command' && event.name).toBe(name);
}

const count = (op: number) => h!.fake.gateway.received.filter((p) => p.op === op).length;

describe('Discord gateway faults', () => {
  it('op 7 Reconnect: reconnects and resumes the session', async () => {
    h = await startHarness();
    h.fake.gateway.requestReconnect();
    await h.fake.waitFor(() => h!.fake.gateway.resumes === 1, 'a resume');
    expect(h.fake.gateway.identifies).toBe(1);
    expect(h.fake.gateway.received.find((p) => p.op === 6)?.path).toBe('/resume');
    await stillDelivers('status');
  });

  it('op 9 resumable: resumes', async () => {
    h = await startHarness();
    h.fake.gateway.invalidateSession(true);
    await h.fake.waitFor(
      () => h!.fake.gateway.resumes + h!.fake.gateway.identifies >= 2,
      'a resume or identify',
    );
    expect(h.fake.gateway.resumes).toBe(1);
    expect(h.fake.gateway.identifies).toBe(1);
    await stillDelivers('runs');
  });

  it('op 9 not resumable: identifies anew, no resume attempted', async () => {
    h = await startHarness();
    const resumesBefore = count(6);
    h.fake.gateway.invalidateSession(false);
    // Discord allows one IDENTIFY per 5 s (session_start_limit bucket) and discord.js keeps to
    // it, plus up to 1.5 s of jitter: the second one comes 5–6.5 s after the first by design, so
    // the wait is bounded by the test's own timeout, not by a deadline 1.5 s past that.
    await h.fake.waitFor(() => h!.fake.gateway.identifies === 2, 'a second identify', 25_000);
    expect(count(6)).toBe(resumesBefore);
    expect(h.fake.gateway.resumes).toBe(0);
    await stillDelivers('whoami');
  });

  it('a zombie connection (heartbeats not acknowledged): drops it and resumes', async () => {
    h = await startHarness({}, { heartbeatIntervalMs: 1000 });
    h.fake.gateway.goZombie();
    // The next heartbeat goes unanswered and the one after finds it so: up to two intervals.
    await h.fake.waitFor(() => h!.fake.gateway.resumes === 1, 'a resume after the zombie', 10_000);
    expect(h.fake.gateway.identifies).toBe(1);
    await stillDelivers('status');
  });
});
