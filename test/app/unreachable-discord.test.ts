/**
 * A Discord channel that refuses the bot next to a working Telegram chat, one bridge
 * (`startBridge`), real discord.js and grammY against the fakes. The channel refuses on the
 * fake's own permission state (the bot's role lost View Channel: 50001 Missing Access; lost Send
 * Messages: 50013 Missing Permissions); Telegram gets the status and the checkpoint, the run moves
 * on, the starter is told once there, and the channel is tried again when an operator writes there.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from '../contracts/drivers/discord.ts';
import { TelegramDriver } from '../contracts/drivers/telegram.ts';
import { until } from '../contracts/platform-driver.ts';
import { World } from '../contracts/world.ts';
import type { FakePermission } from '../fakes/discord-access.ts';

let discord: DiscordDriver;
let telegram: TelegramDriver;
let w: World;

beforeEach(async () => {
  discord = await DiscordDriver.start();
  telegram = await TelegramDriver.start();
  w = await World.create([discord, telegram]);
});
afterEach(async () => {
  await w.cleanup();
});

const CASES: { permission: FakePermission; reason: string; code: number; hint: RegExp }[] = [
  { permission: 'VIEW_CHANNEL', reason: 'missing_access', code: 50001, hint: /View Channel/ },
  {
    permission: 'SEND_MESSAGES',
    reason: 'missing_permissions',
    code: 50013,
    hint: /Send Messages/,
  },
];

describe.each(CASES)('a Discord channel where the bot lost $permission', (c) => {
  it(`is marked unreachable (${c.reason}); Telegram gets the run, the starter is told once there`, async () => {
    const { state } = discord.fake;
    state.access.deny(state.text.id, c.permission);

    await telegram.sendCommand('alice', 'run demo add login');
    const cp = await w.message(telegram, /Checkpoint plan:1/);
    const mark = await w.bridge.repos.unreachable.get(discord.chatRef);
    expect(mark).toMatchObject({ reason: c.reason });
    expect(mark!.detail).toContain(String(c.code));
    const warning = await w.message(telegram, /cannot post in/);
    expect(warning.text).toContain(`cannot post in ${discord.chatRef} (${c.reason})`);
    expect(warning.text).toMatch(c.hint);

    await telegram.press('bob', cp, 'Approve');
    await w.message(telegram, /Checkpoint review:1/);
    expect(w.messages(telegram, /cannot post in/)).toHaveLength(1);
    expect(discord.latestMessages()).toEqual([]);

    // The permission is given back and Alice writes there: the channel is tried again.
    state.access.allow(state.text.id, c.permission);
    await discord.sendCommand('alice', 'runs');
    await until(
      async () => (await w.bridge.repos.unreachable.get(discord.chatRef)) === null,
      'the mark cleared',
    );
    await w.message(discord, /^Recent runs:/);
  });
});
