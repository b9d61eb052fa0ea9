/**
 * Records what a checkpoint looks like on each platform: the whole bridge (`startBridge`, as
 * `serve` runs it) serving Telegram, Slack and Discord through the test fakes, a demo run started
 * on Telegram, its checkpoint captured on all three as the platforms stored it (open, then decided
 * by a press on Slack), and the console's run page. Used by scripts/screens.ts.
 */
import { DiscordDriver } from '../../test/contracts/drivers/discord.ts';
import { OPS, SlackDriver } from '../../test/contracts/drivers/slack.ts';
import { TEAM, TelegramDriver } from '../../test/contracts/drivers/telegram.ts';
import type { Persona, SeenMessage } from '../../test/contracts/platform-driver.ts';
import { runIdOf, World } from '../../test/contracts/world.ts';

/** One platform's stored copy of a bot message: the fields its client draws. */
export type Captured =
  | { platform: 'telegram'; html: string; keyboard: { text: string }[][] }
  | { platform: 'slack'; blocks: unknown[]; people: Record<string, string> }
  | {
      platform: 'discord';
      content: string;
      embeds: unknown[];
      components: unknown[];
      people: Record<string, string>;
    };

/** The cast's ids on a platform, with the names its client shows for a mention of them. */
function peopleOf(d: {
  userId(who: Persona): string;
  displayName(who: Persona): string;
}): Record<string, string> {
  const personas: Persona[] = ['alice', 'bob', 'carol', 'dave'];
  return Object.fromEntries(personas.map((p) => [d.userId(p), d.displayName(p)]));
}

/** Both moments of one checkpoint on every platform, and the bridge still running. */
export interface Capture {
  readonly open: Captured[];
  readonly decided: Captured[];
  readonly runId: string;
  readonly world: World;
}

/** Starts the bridge on the fakes, runs the demo to its first checkpoint and decides it. */
export async function capture(): Promise<Capture> {
  const telegram = await TelegramDriver.start();
  const slack = await SlackDriver.start();
  const discord = await DiscordDriver.start();
  const world = await World.create([telegram, slack, discord]);
  const drivers = [telegram, slack, discord] as const;
  const stored = (id: string, d: (typeof drivers)[number]): Captured => {
    if (d === telegram) {
      const m = telegram.fake.botMessages(TEAM.id).find((x) => String(x.message_id) === id)!;
      const keyboard = (m.replyMarkup?.inline_keyboard ?? []) as { text: string }[][];
      return { platform: 'telegram', html: m.rawText ?? m.text ?? '', keyboard };
    }
    if (d === slack) {
      const m = (slack.fake.messages.get(OPS) ?? []).find((x) => x.ts === id)!;
      return { platform: 'slack', blocks: m.blocks, people: peopleOf(slack) };
    }
    const m = discord.fake.state
      .channelMessages(discord.fake.state.text.id)
      .find((x) => x.id === id)!;
    const { content, embeds, components } = m;
    return { platform: 'discord', content, embeds, components, people: peopleOf(discord) };
  };
  await telegram.sendCommand('alice', 'run demo add a login page');
  const copies: SeenMessage[] = [];
  for (const d of drivers) copies.push(await world.message(d, /Checkpoint plan:1/));
  const runId = runIdOf(copies[0]!);
  const open = drivers.map((d, i) => stored(copies[i]!.id, d));
  await slack.press('bob', copies[1]!, 'Approve');
  const decided: Captured[] = [];
  for (const [i, d] of drivers.entries()) {
    await world.settles(d, copies[i]!, (m) => m.buttons.length === 0, 'the decision');
    decided.push(stored(copies[i]!.id, d));
  }
  return { open, decided, runId, world };
}
