/**
 * Telegram sends a webhook update again when the bridge answered too late (its timeout passed on
 * the fake's clock while the bridge worked on it) or not at all (the bridge was down): the whole
 * bridge (`startBridge`) in webhook mode and grammY against the fake Bot API. What people see:
 * a command applied once, even when the redelivery reaches the next bridge process.
 */
import { createServer } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { TEAM, TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';
import { slow } from '../support/slowdown.ts';

const SECRET = 'wh-secret_0123456789';
/** Telegram's patience with a webhook call, and its pause before sending again (fake clock). */
const TIMEOUT_MS = slow(60_000);
const RETRY_MS = 30_000;

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** A fake whose clock the test moves ahead of real time, and a bridge taking its webhook. */
async function webhookWorld(): Promise<{ telegram: TelegramDriver; later: (ms: number) => void }> {
  let ahead = 0;
  const telegram = await TelegramDriver.start({
    now: () => Date.now() + ahead,
    webhook: { timeoutMs: TIMEOUT_MS, retryMs: RETRY_MS, maxAttempts: 50 },
  });
  const port = await freePort();
  w = await World.create([telegram], {
    port,
    env: {
      TELEGRAM_WEBHOOK_URL: `http://127.0.0.1:${port}/telegram/webhook`,
      TELEGRAM_WEBHOOK_SECRET: SECRET,
    },
  });
  const later = (ms: number) => {
    ahead += ms;
  };
  return { telegram, later };
}

const attemptsFor = (telegram: TelegramDriver, updateId: number) =>
  telegram.fake.delivery.attempts.filter((a) => a.updateId === updateId).map((a) => a.outcome);

describe('a Telegram webhook update delivered again', () => {
  it('answered too late: Telegram sends it again to the next bridge process, which does not apply it twice', async () => {
    const { telegram, later } = await webhookWorld();
    await telegram.sendCommand('alice', 'run demo add login');
    const plan = await w!.message(telegram, /Checkpoint plan:1/);
    // The bridge is slow over this press: by its answer, Telegram's timeout has passed. (A
    // command's reply is only committed within the webhook call, so a press, whose answer is a
    // call made there, is the update that can be slow.)
    let slow = true;
    telegram.fake.onArrival = (method) => {
      if (method === 'answerCallbackQuery' && slow) {
        slow = false;
        later(TIMEOUT_MS + 1000);
      }
    };
    const update = telegram.fake.userPresses({
      chatId: TEAM.id,
      messageId: Number(plan.id),
      from: telegram.user('bob'),
      label: 'Approve',
    });
    const queryId = String((update.callback_query as { id: string }).id);
    await until(() => attemptsFor(telegram, update.update_id).includes('timeout'), 'the timeout');
    const answers = () =>
      telegram.fake.calls.filter(
        (c) => c.method === 'answerCallbackQuery' && String(c.params.callback_query_id) === queryId,
      ).length;
    expect(answers()).toBe(1);

    // A new bridge process; then Telegram's pause is over and the press comes again.
    await w!.restart();
    later(RETRY_MS);
    // The 200 is the answer once the bridge handled the delivery: nothing more was sent.
    await until(() => attemptsFor(telegram, update.update_id).includes(200), 'the redelivery');
    expect(attemptsFor(telegram, update.update_id)).toEqual(['timeout', 200]);
    // Applied once: a second Approve would have been answered "closed" (a second answer).
    expect(answers()).toBe(1);
    await w!.message(telegram, /Checkpoint review:1/);

    // The bridge still takes new updates.
    expect(
      await telegram.answerTo(
        await telegram.press('bob', await w!.message(telegram, /Checkpoint review:1/), 'Approve'),
      ),
    ).toMatch(/^Approved/);
  });

  it('sent while the bridge was down: applied once it is back', async () => {
    const { telegram, later } = await webhookWorld();
    await w!.stop();
    const update = telegram.fake.userSends({
      chat: TEAM,
      from: telegram.user('alice'),
      text: '/run demo add login',
    });
    await until(
      () => attemptsFor(telegram, update.update_id).includes('unreachable'),
      'a refused attempt',
    );
    await w!.start();
    later(RETRY_MS);
    await w!.message(telegram, /Checkpoint plan:1/);
    expect(attemptsFor(telegram, update.update_id).at(-1)).toBe(200);
    expect(await w!.bridge.orchestrator.listRuns({})).toHaveLength(1);
  });
});

/** A port nothing listens on right now (the webhook URL names it before the bridge starts). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
