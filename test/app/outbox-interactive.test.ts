/**
 * The whole bridge (`startBridge`, real grammY against the fake Bot API) meeting a Telegram
 * stricter than the outbox's table assumes (no burst over 1 message a second in a chat): the
 * replies to quick commands use the chat's burst once, get one 429, which the adapter waits
 * out; startBridge tells the outbox (the adapter's API-call observer), and the chat's next
 * replies keep its pace instead of bursting into 429s again. And a reply that waits for its
 * delivery (a busy group's 20 a minute, a slow platform) holds no update behind it: a press
 * right after it is answered at once (Telegram drops an answer after 15 s).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { TEAM, TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

describe('interactive replies through startBridge', () => {
  it('a platform without the burst: one 429, then the chat’s replies keep its pace', async () => {
    const telegram = await TelegramDriver.start({
      limits: {
        perChat: { max: 1, windowMs: 1000 },
        perGroup: { max: 20, windowMs: 60_000 },
        overall: { max: 30, windowMs: 1000 },
      },
    });
    w = await World.create([telegram]);
    const replies = () =>
      telegram.fake.calls.filter(
        (c) => c.ok && c.method === 'sendMessage' && Number(c.params.chat_id) === TEAM.id,
      );
    for (let i = 0; i < 4; i++) await telegram.sendCommand('alice', 'runs');
    await until(() => replies().length === 4, 'four replies');
    const refused = telegram.fake.calls.filter((c) => c.errorCode === 429);
    // The second reply tried the burst; after its 429 nothing in the chat tries it again.
    expect(refused).toHaveLength(1);
    const at = replies().map((c) => c.at!);
    for (let i = 1; i < at.length; i++) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(1000);
  });

  it('a reply still on its way holds no press behind it: the press is answered meanwhile', async () => {
    const telegram = await TelegramDriver.start();
    w = await World.create([telegram]);
    await telegram.sendCommand('alice', 'run demo add login');
    const plan = await w.message(telegram, /Checkpoint plan:1/);
    // The reply to `runs` reaches Telegram, whose answer is held: its delivery does not end.
    const held = telegram.fake.answerLater(
      'sendMessage',
      (p) =>
        Number(p.chat_id) === TEAM.id &&
        /\bruns?\b/i.test(String(p.text)) &&
        !/Checkpoint/.test(String(p.text)),
    );
    await telegram.sendCommand('alice', 'runs');
    await held.arrived;
    // Before: the poller took the press only once that reply was delivered (a minute in a busy
    // group), and the press's answer came after Telegram's 15 s.
    const press = await telegram.press('bob', plan, 'Approve');
    expect(await telegram.answerTo(press)).toBe('Approved — 1 of 1 approval; the run moves on');
    held.release();
    await w.message(telegram, /Checkpoint review:1/);
  });
});
