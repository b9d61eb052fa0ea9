/**
 * Slack's 3 s ack deadline met by the adapter in HTTP mode (real Bolt against the fake Slack):
 * when 3 s pass on Slack's clock before the ack reaches it, Slack sends the event again, marked
 * `X-Slack-Retry-Num: 1` / `http_timeout`, while the first delivery's slow handler is still
 * working. The retry is acknowledged at once (Slack would otherwise retry again, minutes apart)
 * and carries the same idempotency key, which chatops uses to apply it once
 * (test/app/slack-refusals.test.ts shows that end to end). The adapter acks before it works, so a
 * slow handler alone never delays the ack: the clock is moved while the request is on its way.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Command } from '../../../src/bridges/events.ts';
import { ALICE, type Harness, OPS, startHttpHarness } from './support.ts';

let h: Harness;

beforeEach(async () => {
  h = await startHttpHarness();
});

afterEach(async () => {
  await h.close();
});

describe('a slow handler past Slack’s 3 s deadline', () => {
  it('gets the event again, acked while the first is still handled, same key', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let calls = 0;
    h.react = async () => {
      calls++;
      if (calls === 1) await held;
    };
    const sending = h.fake.sendMention({ user: ALICE, channel: OPS, text: 'run demo' });
    // 3 s pass on Slack's side before the ack can reach it (a slow network, a stalled process).
    h.fake.clock.advance(3_001);
    const first = await sending;
    const attempts = await h.fake.waitForAttempts(first.request, 2);
    expect(attempts.map((a) => [a.retryNum, a.retryReason, a.timedOut, a.status])).toEqual([
      [0, undefined, true, 200],
      [1, 'http_timeout', false, 200],
    ]);
    // The retry was answered while the first delivery's work was still held.
    const retried = (await h.inbox.next()) as Command;
    expect(calls).toBe(2);
    release();
    const original = (await h.inbox.next()) as Command;
    expect(retried.idempotencyKey).toBe(original.idempotencyKey);
    expect(original.idempotencyKey).toMatch(/^slack:event:Ev0\d+$/);
    // Acked in time once: no further retry, even minutes later on Slack's clock.
    h.fake.clock.advance(10 * 60_000);
    expect(h.fake.attemptsOf(first)).toHaveLength(2);
  });
});
