/**
 * A stop never waits on a platform's limits (issue 39): Telegram answers a send with 429 and a
 * retry_after of five minutes, and the bridge is stopped meanwhile. The stop ends in seconds,
 * the cut-short messages stay queued in bridge.db, and the next start delivers them, each once,
 * with the checkpoint's buttons working (`startBridge`, real grammY against the fake Bot API).
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until } from '../contracts/platform-driver.ts';
import { runIdOf, World } from '../contracts/world.ts';
import { holdsFor } from '../support/slowdown.ts';

/** Telegram's answer: come back in five minutes (far longer than any test waits). */
const RETRY_AFTER_S = 300;

let tg: TelegramDriver;
let w: World;

beforeEach(async () => {
  tg = await TelegramDriver.start();
  w = await World.create([tg]);
});
afterEach(async () => {
  await w.cleanup();
});

/** Outbox rows still waiting in bridge.db (the bridge stopped: read directly). */
function waiting(home: string): { id: number; not_before: number }[] {
  const db = new Database(path.join(home, 'bridge.db'));
  try {
    return db
      .prepare(`select id, not_before from outbox where state in ('pending', 'attempted')`)
      .all() as { id: number; not_before: number }[];
  } finally {
    db.close();
  }
}

describe('a stop while Telegram asks the bridge to wait five minutes', () => {
  it('ends at once, and the next start delivers what was cut short, once', async () => {
    await tg.sendCommand('alice', 'run demo add login');
    await w.message(tg, /^Run \S+ · Demo/);
    // The next post (the plan's answer or its checkpoint) is refused for five minutes.
    tg.fake.failNext('sendMessage', 429, `Too Many Requests: retry after ${RETRY_AFTER_S}`, {
      retry_after: RETRY_AFTER_S,
    });
    await until(
      () => waiting(w.home).some((r) => r.not_before > Date.now()),
      'the 429 kept in bridge.db',
    );

    const started = Date.now();
    await w.stop();
    // Before, the stop waited for the platform's window: five minutes, past any deadline here.
    expect(Date.now() - started).toBeLessThan(RETRY_AFTER_S * 1000);
    const left = waiting(w.home);
    expect(left.length).toBeGreaterThan(0);

    // The window has passed when the bridge starts again.
    const db = new Database(path.join(w.home, 'bridge.db'));
    db.prepare(`update outbox set not_before = 0 where state in ('pending', 'attempted')`).run();
    db.close();
    await w.start();
    const plan = await w.message(tg, /Checkpoint plan:1/);
    await until(() => waiting(w.home).length === 0, 'the queue drained');
    await holdsFor(
      () =>
        w.messages(tg, /Checkpoint plan:1/).length === 1 &&
        w.messages(tg, /💬 plan \(attempt 1\)/).length === 1,
      1000,
      'the cut-short messages posted twice',
    );
    const press = await tg.press('bob', plan, 'Approve');
    await tg.answerTo(press);
    await w.message(tg, /Checkpoint review:1/);
    expect((await w.bridge.orchestrator.getRun(runIdOf(plan))).status).toBe('awaiting');
  });
});
