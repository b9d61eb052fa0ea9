/**
 * Benchmark: press → edit on Slack and Discord as a person sees it, through the whole bridge
 * as `serve` assembles it (test/contracts/world.ts: real SDKs, the outbox, bridge.db) against
 * each platform's fake. bench/fanout.ts measures Telegram's outbox alone; this one presses real
 * buttons. `--platforms telegram` runs it on Telegram too, but in the contract driver's
 * supergroup, whose 20 messages a minute the runs' own messages use up: its figure is that
 * window, not the press (bench/fanout.ts measures Telegram in a private chat).
 *
 * Per phase, first `run demo …` in the bound chat `--presses` times, until each run's plan
 * checkpoint shows its buttons, then 5 s for the chat to settle. Then each press: a person's
 * reaction time (300 ms), Bob presses Approve; press → edit is from the press being sent to the
 * fake to the checkpoint message showing the decision (its buttons gone), as the fake holds it.
 * Then a pause (`--think-ms`) before the next one, as a person reads.
 *   quiet:          nothing else in the bridge.
 *   beside_fanout:  `--chats` more chats of the same platform are bound to a second workspace,
 *                   where a run of four steps starts every `--fanout-every-ms` (5 s) for as
 *                   long as the presses last: every run posts and edits its status in every one
 *                   of them, paced by the outbox to the platform's limits (about a call a second
 *                   per chat), so the outbox always has fan-out calls waiting.
 * `through_press_response`: how many of a phase's presses had their message edited through the
 * press's own response (Slack response_url, Discord UPDATE_MESSAGE) rather than chat.update or
 * a REST PATCH (docs/outbox.md, "Press → edit beside a fan-out").
 * Goals (issue 31): p50 ≤ 50 ms quiet, ≤ 300 ms beside the fan-out.
 *
 * Run: npx tsx bench/press-edit.ts [--platforms slack,discord] [--presses 6]
 *      [--chats 30] [--think-ms 3000] [--fanout-every-ms 5000]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DiscordDriver } from '../test/contracts/drivers/discord.ts';
import { SlackDriver } from '../test/contracts/drivers/slack.ts';
import { TelegramDriver } from '../test/contracts/drivers/telegram.ts';
import type { PlatformDriver, SeenMessage } from '../test/contracts/platform-driver.ts';
import { World } from '../test/contracts/world.ts';
import { snowflake } from '../test/fakes/discord-wire.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const PLATFORMS = arg('platforms', 'slack,discord').split(',');
const PRESSES = Number(arg('presses', '6'));
const CHATS = Number(arg('chats', '30'));
const THINK_MS = Number(arg('think-ms', '3000'));
const FANOUT_EVERY_MS = Number(arg('fanout-every-ms', '5000'));
const REACTION_MS = 300;
/** After a phase's checkpoints are posted: their status edits and answers go out meanwhile. */
const SETTLE_MS = 5000;
const DEADLINE_MS = 120_000;
const GOALS = { quiet_p50_ms: 50, beside_fanout_p50_ms: 300 };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Polls `probe` every 2 ms until it returns a value; throws after DEADLINE_MS. */
async function poll<T>(probe: () => T | undefined, what: string): Promise<T> {
  const until = performance.now() + DEADLINE_MS;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (performance.now() > until) throw new Error(`press-edit: no ${what} in ${DEADLINE_MS} ms`);
    await sleep(2);
  }
}

function summary(values: readonly number[]) {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? null;
  return { n: s.length, p50_ms: at(0.5), max_ms: s.at(-1) ?? null, samples: [...values] };
}

/** A platform's driver, with `CHATS` more chats of its own for the fan-out. */
interface Platform {
  driver: PlatformDriver;
  fanoutChats: string[];
  /** Calls the fake answered in the fan-out chats so far (sends and edits). */
  fanoutCalls: () => number;
  /**
   * Edits made so far through a press's own response (Slack: response_url posts replacing the
   * pressed message; Discord: UPDATE_MESSAGE callbacks), not the platform's rate-limited edit.
   */
  pressResponses: () => number;
}

async function platform(name: string): Promise<Platform> {
  const n = Array.from({ length: CHATS }, (_, i) => i);
  if (name === 'slack') {
    const driver = await SlackDriver.start();
    const ids = n.map((i) => `C0FAN${i}`);
    const set = new Set(ids);
    return {
      driver,
      fanoutChats: ids.map((id) => `slack:${driver.fake.workspace.teamId}:${id}`),
      fanoutCalls: () =>
        driver.fake.calls.filter((c) => c.ok && set.has(String(c.params.channel))).length,
      pressResponses: () =>
        driver.fake.responses.filter((r) => r.body.replace_original === true).length,
    };
  }
  if (name === 'discord') {
    const driver = await DiscordDriver.start();
    const { state } = driver.fake;
    const ids = n.map(() => snowflake());
    for (const [i, id] of ids.entries()) {
      state.channels.set(id, { id, kind: 'text', guildId: state.guildId, name: `fan-${i}` });
    }
    const set = new Set(ids);
    return {
      driver,
      fanoutChats: ids.map((id) => `discord:${state.guildId}:${id}`),
      fanoutCalls: () =>
        driver.fake.calls.filter(
          (c) => c.status < 300 && set.has(/^\/channels\/(\d+)\//.exec(c.path)?.[1] ?? ''),
        ).length,
      pressResponses: () =>
        [...state.interactions.values()].filter((i) => i.callbacks.some((c) => c.type === 7))
          .length,
    };
  }
  if (name === 'telegram') {
    const driver = await TelegramDriver.start();
    const ids = n.map((i) => -2_000_000 - i);
    for (const id of ids) driver.fake.addChat({ id, type: 'supergroup', title: `F${id}` });
    const set = new Set(ids);
    return {
      driver,
      fanoutChats: ids.map((id) => `telegram:${id}`),
      fanoutCalls: () =>
        driver.fake.calls.filter((c) => c.ok && set.has(Number(c.params.chat_id))).length,
      // Telegram has no press response that edits a message.
      pressResponses: () => 0,
    };
  }
  throw new Error(`press-edit: unknown platform ${name}`);
}

/** A new run's plan checkpoint in the bound chat, once it shows its buttons. */
async function checkpoint(d: PlatformDriver, i: number, seen: Set<string>): Promise<SeenMessage> {
  await d.sendCommand('alice', `run demo press ${i}`);
  const cp = await poll(
    () =>
      d
        .latestMessages()
        .find(
          (m) =>
            !seen.has(m.id) && /Checkpoint plan:1/.test(m.text) && m.buttons.includes('Approve'),
        ),
    'plan checkpoint',
  );
  seen.add(cp.id);
  return cp;
}

/** Bob presses Approve on `cp` after a person's reaction time; returns press → edit (ms). */
async function pressOnce(w: World, d: PlatformDriver, cp: SeenMessage): Promise<number> {
  await sleep(REACTION_MS);
  const t = performance.now();
  await d.press('bob', cp, 'Approve');
  await poll(() => (decided(w, d, cp) ? true : undefined), 'decision edit');
  return performance.now() - t;
}

const decided = (w: World, d: PlatformDriver, cp: SeenMessage) =>
  (w.current(d, cp)?.buttons.length ?? 1) === 0;

/** The fan-out: runs of four steps in a second workspace every chat in `chats` is bound to. */
async function startFanout(w: World, chats: readonly string[]) {
  const ws = path.join(w.dir, 'fanout-ws');
  fs.mkdirSync(path.join(ws, 'workflows'), { recursive: true });
  const steps = [0, 1, 2, 3].map((s) => `  - id: s${s}\n    agent: demo\n    prompt: part ${s}\n`);
  fs.writeFileSync(
    path.join(ws, 'workflows', 'fan.workflow.yaml'),
    `id: fan\nsteps:\n${steps.join('')}`,
  );
  for (const chatRef of chats) await w.bridge.repos.bindings.bind({ chatRef, workspace: ws });
  let on = true;
  let started = 0;
  const loop = (async () => {
    while (on) {
      await w.bridge.orchestrator.startRun({
        workflow: 'fan',
        workspace: ws,
        spec: `fan-out ${started}`,
        actor: { id: 'cli:bench' },
      });
      started++;
      await sleep(FANOUT_EVERY_MS);
    }
  })();
  return async () => {
    on = false;
    await loop;
    return started;
  };
}

async function measure(name: string) {
  const p = await platform(name);
  const w = await World.create([p.driver]);
  const seen = new Set<string>();
  let stop: (() => Promise<number>) | undefined;
  try {
    // A phase's checkpoints are posted before its presses, and its chat left to settle: a press's
    // figure is the press and its edit, never the job queue (the fan-out's runs take the bridge's
    // job slots) nor the posting of the checkpoints.
    const post = async (from: number) => {
      const cps: SeenMessage[] = [];
      for (let i = from; i < from + PRESSES; i++) cps.push(await checkpoint(p.driver, i, seen));
      await sleep(SETTLE_MS);
      return cps;
    };
    const quietCps = await post(0);
    const quiet: number[] = [];
    const viaBefore = p.pressResponses();
    for (const cp of quietCps) {
      quiet.push(await pressOnce(w, p.driver, cp));
      await sleep(THINK_MS);
    }
    const quietVia = p.pressResponses() - viaBefore;
    const besideCps = await post(PRESSES);
    stop = await startFanout(w, p.fanoutChats);
    await sleep(2000); // the fan-out under way before the first press
    const callsBefore = p.fanoutCalls();
    const besideViaBefore = p.pressResponses();
    const beside: number[] = [];
    for (const cp of besideCps) {
      beside.push(await pressOnce(w, p.driver, cp));
      await sleep(THINK_MS);
    }
    const besideVia = p.pressResponses() - besideViaBefore;
    const runs = await stop();
    stop = undefined;
    const r = (v: number[]) => v.map((x) => Math.round(x));
    return {
      quiet: { ...summary(r(quiet)), through_press_response: quietVia },
      beside_fanout: {
        ...summary(r(beside)),
        through_press_response: besideVia,
        fanout_chats: CHATS,
        fanout_runs_started: runs,
        fanout_calls_during_presses: p.fanoutCalls() - callsBefore,
      },
    };
  } finally {
    await stop?.();
    await w.cleanup();
  }
}

const load = () => Number(os.loadavg()[0]!.toFixed(2));
const loadAtStart = load();
const platforms: Record<string, unknown> = {};
for (const name of PLATFORMS) {
  process.stderr.write(`press-edit: ${name}…\n`);
  platforms[name] = await measure(name);
}
console.log(
  JSON.stringify(
    {
      bench: 'press-edit',
      node: process.version,
      cpus: os.cpus().length,
      load_avg_1m: { start: loadAtStart, end: load() },
      presses: PRESSES,
      reaction_ms: REACTION_MS,
      think_ms: THINK_MS,
      goals: GOALS,
      ...platforms,
    },
    null,
    2,
  ),
);
process.exit(0);
