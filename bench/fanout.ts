/**
 * Benchmark: fan-out of run status to many Telegram group chats against a fake Bot API that
 * enforces Telegram's limits (1 message/s per chat, 20/min per group, 30/s overall; a call over
 * them gets 429 + retry_after). `runs` runs (4 steps of `stepMs`, progress lines every 300 ms,
 * started 250 ms apart) are followed by every chat; the real Notifier and Telegram adapter post,
 * edit and announce, through the outbox (`--mode outbox`) or straight to the adapter as before
 * the outbox (`--mode direct`). Per chat count: 10 and 30.
 * Prints one JSON object: per mode and chat count, API calls, 429s, messages delivered per chat,
 * the time until every chat shows every run's final state and end notice, and the ideal time:
 * the same necessary messages (status message, final edit, notice per run and chat) at their
 * release times, scheduled greedily under the same limits, and no earlier than the bot's other
 * calls (the interactive chats', where they went) allow under its 30 a second
 * (bench/fanout-ideal.ts; `ratio_to_fanout_alone_ideal`: against the greedy ideal alone).
 *
 * Interactive figures (`--presses N`, default 5): a private chat beside the fan-out gets a
 * checkpoint message (urgency `decision`), and 300 ms after it was answered a "press" edits it
 * (urgency `interactive`, as chatops marks it); press → edit is the time from the edit being
 * queued to the platform's answer, p50 and max, during the fan-out (`press_during_fanout_ms`)
 * and in a quiet bridge (`quiet.press_to_edit_ms`). And `/run` → checkpoint in another private
 * chat, modelled on the calls chatops makes there (the press story's outbox rows): the status
 * message, its "running" edit, then after the agent's `--agent-ms` the answer, the checkpoint
 * message and the status edit; the figure is /run → checkpoint answered minus the agent's time
 * (`run_to_checkpoint_ms`). `--no-interactive` sends those calls with the urgencies chatops used
 * before issue 31 (`decision`/`notice`): the pacing as it was. `--think-ms`: the pause between
 * two interactions of a loop.
 *
 * Run: npx tsx bench/fanout.ts [--mode outbox|direct|both] [--chats 10,30] [--runs 5] [--step-ms 2500] [--presses 5] [--agent-ms 100] [--think-ms 4000] [--no-interactive]
 * (FANOUT_TRACE=1 prints the calls of the chat that was final last, FANOUT_TRACE=press those of
 * the press chat, on stderr; FANOUT_TRACE=timeline also each call of that chat with when its
 * content was queued, its chat's window and a bot-wide slot opened, its timer was due and fired,
 * its start and answer, and where the tail's time went over all groups (bench/fanout-trace.ts);
 * with FANOUT_TIMELINE_FILE=f.json the queued calls are written for bench/fanout-replay.ts)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import type { Channel, Platform, Urgency } from '../src/bridges/channel.ts';
import { TelegramChannel } from '../src/bridges/telegram/index.ts';
import type { ChatOpsDeps } from '../src/chatops/context.ts';
import { Notifier } from '../src/chatops/notifier.ts';
import type { ChatOpsOrchestrator } from '../src/chatops/ports.ts';
import { migrateToLatest, openBridgeDb } from '../src/db/connection.ts';
import { createRepositories } from '../src/db/repositories/index.ts';
import type { Command } from '../src/engine/commands.ts';
import { decide } from '../src/engine/decide.ts';
import type { RunEvent } from '../src/engine/events.ts';
import { evolve } from '../src/engine/evolve.ts';
import type { RunState, Workflow } from '../src/engine/model.ts';
import { FakeTelegram } from '../test/fakes/telegram.ts';
import { COUNTED } from '../test/fakes/telegram-limits.ts';
import { idealFinish, idealWithOthers, type Necessary } from './fanout-ideal.ts';
import { InteractiveLoops, summary } from './fanout-interactive.ts';
import { Timeline } from './fanout-trace.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1]! : fallback;
};
const MODES = arg('mode', 'both') === 'both' ? ['direct', 'outbox'] : [arg('mode', 'both')];
const CHAT_COUNTS = arg('chats', '10,30').split(',').map(Number);
const RUNS = Number(arg('runs', '5'));
const STEP_MS = Number(arg('step-ms', '2500'));
const STEPS = 4;
const PROGRESS_MS = 300;
const STAGGER_MS = 250;
const PRESSES = Number(arg('presses', '5'));
/** How long after the checkpoint message appears the person presses. */
const REACTION_MS = 300;
const PRESS_CHAT = 4242;
/** The private chat where `/run` is typed (the run → checkpoint figure). */
const RUN_CHAT = 4343;
const AGENT_MS = Number(arg('agent-ms', '100'));
/**
 * Between one interaction's end and the next one (the agent's next step, the person reading):
 * a chat's sustained rate stays about 1 call a second, so back-to-back interactions (0) drain
 * its burst and then wait for it.
 */
const THINK_MS = Number(arg('think-ms', '4000'));
/** The urgencies of before issue 31 (no `interactive`): the pacing as it was. */
const BEFORE = process.argv.includes('--no-interactive');
const waited = (then: Urgency): Urgency => (BEFORE ? then : 'interactive');
const loops = new InteractiveLoops({
  presses: PRESSES,
  reactionMs: REACTION_MS,
  thinkMs: THINK_MS,
  agentMs: AGENT_MS,
  pressChat: PRESS_CHAT,
  runChat: RUN_CHAT,
  waited,
});
/**
 * The fake's limits: Telegram's, its per-chat burst as the outbox's table assumes it. The ideal
 * ignores the burst: the fan-out's messages are not interactive, none of them may use it.
 */
const LIMITS = {
  perChat: { max: 1, windowMs: 1000, burst: 2 },
  perGroup: { max: 20, windowMs: 60_000 },
  overall: { max: 30, windowMs: 1000 },
};
const MESSAGE_METHODS = new Set(['sendMessage', 'editMessageText', 'deleteMessage']);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const WORKFLOW: Workflow = {
  id: 'fanout',
  version: '000000000000',
  file: 'fanout.workflow.yaml',
  steps: Array.from({ length: STEPS }, (_, i) => ({
    id: `s${i}`,
    agent: 'demo',
    prompt: `Do part ${i}.`,
  })),
};

/** The notifier never asks the orchestrator anything; any use would be a benchmark bug. */
const NO_ORCHESTRATOR = new Proxy({} as ChatOpsOrchestrator, {
  get: (_t, prop) => {
    throw new Error(`the fan-out benchmark has no orchestrator (${String(prop)})`);
  },
});

/** Commits one command with the engine's own decide/evolve. */
function apply(state: RunState | null, command: Command): { state: RunState; events: RunEvent[] } {
  const d = decide(state, command);
  if (!d.ok) throw new Error(d.rejection.message);
  let next = state;
  for (const e of d.events) next = evolve(next, e);
  return { state: next!, events: [...d.events] };
}

interface Scenario {
  mode: string;
  chats: number;
}

async function scenario({ mode, chats }: Scenario) {
  loops.failures = 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-fanout-'));
  const file = path.join(dir, 'bridge.db');
  const fake = await FakeTelegram.start({ limits: LIMITS });
  const chatIds = Array.from({ length: chats }, (_, i) => -1_000_000 - i);
  for (const id of chatIds) fake.addChat({ id, type: 'supergroup', title: `G${id}` });
  fake.addChat({ id: PRESS_CHAT, type: 'private' });
  fake.addChat({ id: RUN_CHAT, type: 'private' });
  const chatRefs = chatIds.map((id) => `telegram:${id}`);
  const db = openBridgeDb({ file });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const log = pino({ level: 'silent' });
  const timeline = process.env.FANOUT_TRACE === 'timeline' ? new Timeline() : undefined;
  const adapter = new TelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, commands: [] });
  const inner = timeline ? timeline.adapter(adapter) : adapter;
  let channel: Channel = inner;
  let drain = async () => {};
  let close = async () => {};
  if (mode === 'outbox') {
    // Loaded only here, so `--mode direct` also runs on a tree without the outbox (main).
    const o = await import('../src/bridges/outbox/index.ts');
    const store = o.OutboxStore.open(file);
    const outbox = new o.Outbox({
      store,
      inner,
      limits: o.limitsOf('telegram'),
      ...(timeline ? { timers: timeline.timers() } : {}),
    });
    outbox.start();
    channel = new o.OutboxChannel(inner, outbox);
    if (timeline) channel = timeline.queueing(channel);
    drain = () => outbox.drained();
    close = async () => {
      await outbox.stop();
      store.close();
    };
  }
  const deps: ChatOpsDeps = {
    orchestrator: NO_ORCHESTRATOR,
    repos,
    channels: new Map<Platform, Channel>([['telegram', channel]]),
    log,
    clock: () => new Date(),
    defaultWorkspace: dir,
  };
  const notifier = new Notifier(deps, 1000);
  const t0 = Date.now();
  const necessary: Necessary[] = [];
  const release = (at: number) => {
    for (const chat of chatIds.keys()) necessary.push({ chat, release: at - t0 });
  };
  const updates: Promise<void>[] = [];

  const runOne = async (r: number) => {
    await sleep(r * STAGGER_MS);
    const at = () => new Date().toISOString();
    const runId = `2026-11-30T150000Z-fanout-${r}`;
    let { state, events } = apply(null, {
      type: 'start',
      at: at(),
      actor: { id: 'cli:bench' },
      runId,
      workflow: WORKFLOW,
      workspace: dir,
      layout: 'native',
      spec: 'Fan-out benchmark.',
    });
    release(Date.now()); // the status message
    updates.push(notifier.update(state, events, chatRefs));
    for (const step of WORKFLOW.steps) {
      const actor = { id: 'system' };
      ({ state, events } = apply(state, {
        type: 'stepStarted',
        at: at(),
        actor,
        stepId: step.id,
        attempt: 1,
      }));
      updates.push(notifier.update(state, events, chatRefs));
      for (let t = PROGRESS_MS; t < STEP_MS; t += PROGRESS_MS) {
        await sleep(PROGRESS_MS);
        notifier.progress(runId, step.id, `working, ${t} ms in`);
      }
      await sleep(STEP_MS % PROGRESS_MS);
      ({ state, events } = apply(state, {
        type: 'stepFinished',
        at: at(),
        actor,
        stepId: step.id,
        attempt: 1,
        exitCode: 0,
        directive: { action: 'continue' },
        telemetry: { tokensIn: 10, tokensOut: 20, cachedTokens: 0, costUsd: 0.01 },
      }));
      if (state.status === 'completed') {
        release(Date.now()); // the final edit
        release(Date.now()); // the end notice
      }
      updates.push(notifier.update(state, events, chatRefs));
    }
  };
  const presses = chats > 0 && PRESSES > 0 ? loops.pressLoop(channel) : Promise.resolve([]);
  const runPresses = chats > 0 && PRESSES > 0 ? loops.runLoop(channel) : Promise.resolve([]);
  await Promise.all(Array.from({ length: RUNS }, (_, r) => runOne(r)));
  await Promise.all(updates);
  const pressMs = await presses;
  const runMs = await runPresses;
  await drain();
  // The private chats of the interactive figures are not part of the fan-out's figures.
  const calls = fake.calls.filter(
    (c) =>
      MESSAGE_METHODS.has(c.method) && ![PRESS_CHAT, RUN_CHAT].includes(Number(c.params.chat_id)),
  );
  const interactive429 = fake.calls.filter(
    (c) => c.errorCode === 429 && [PRESS_CHAT, RUN_CHAT].includes(Number(c.params.chat_id)),
  ).length;
  const ok = calls.filter((c) => c.ok);
  const finalAt = Math.max(...ok.map((c) => c.at!));
  const closeAll = async () => {
    await notifier.flush();
    await close();
    await db.close();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  await closeAll();
  if (process.env.FANOUT_TRACE === 'press') {
    // The press chat's calls, each with the bot's calls in the second before it.
    for (const c of fake.calls.filter((x) => Number(x.params.chat_id) === PRESS_CHAT)) {
      const botWide = fake.calls.filter((x) => x.at! > c.at! - 1000 && x.at! <= c.at!).length;
      process.stderr.write(
        `${c.at! - t0} ${c.method} ${c.ok ? 'ok' : c.errorCode} bot-calls-1s=${botWide} ${String(c.params.text)}\n`,
      );
    }
  } else if (process.env.FANOUT_TRACE) {
    const lastChat = Number(ok.find((c) => c.at === finalAt)!.params.chat_id);
    const first = calls.filter((c) => Number(c.params.chat_id) === lastChat);
    for (const c of first)
      process.stderr.write(
        `${c.at! - t0} ${c.method} ${c.ok ? 'ok' : c.errorCode} ${String(c.params.text).slice(0, 60).replace(/\n/g, ' ')}\n`,
      );
    const releases = necessary.filter((n) => n.chat === 0).map((n) => n.release);
    process.stderr.write(`releases ${releases.join(' ')}\n`);
    if (timeline) {
      const { TELEGRAM_LIMITS } = await import('../src/bridges/outbox/limits.ts');
      const bot = TELEGRAM_LIMITS.limits.find((l) => l.scope === 'bot')!;
      const held = bot.max - (bot.held ?? 0);
      const report = timeline.report(t0, new Set(chatRefs), Math.min(...releases.slice(5)), held);
      for (const row of report.rows.get(`telegram:${lastChat}`) ?? [])
        process.stderr.write(`${row}\n`);
      process.stderr.write(`tail ${JSON.stringify(report.tail)}\n`);
      if (process.env.FANOUT_TIMELINE_FILE) {
        const calls = timeline.calls.map((c) => ({
          ...c,
          start: c.start - t0,
          answer: c.answer - t0,
        }));
        const queued = timeline.queued.map((q) => ({ ...q, at: q.at - t0 }));
        const file = process.env.FANOUT_TIMELINE_FILE;
        fs.writeFileSync(file, JSON.stringify({ calls, queued, necessary }));
      }
    }
  }
  const perChat = chatIds.map((id) => ok.filter((c) => Number(c.params.chat_id) === id).length);
  const timeToFinal = finalAt - t0;
  // The private chats' calls share the bot's 30 a second with the fan-out (the platform counts
  // them); the ideal gives the fan-out all 30 (docs/outbox.md, "Fan-out to 30 groups").
  const beside = fake.calls.filter(
    (c) =>
      c.ok &&
      MESSAGE_METHODS.has(c.method) &&
      [PRESS_CHAT, RUN_CHAT].includes(Number(c.params.chat_id)) &&
      c.at! <= finalAt,
  ).length;
  // The ideal counts them where they went (a person's calls are not put off for the fan-out);
  // the fan-out alone's ideal is kept beside it.
  const others = fake.calls
    .filter(
      (c) =>
        c.ok && COUNTED.has(c.method) && [PRESS_CHAT, RUN_CHAT].includes(Number(c.params.chat_id)),
    )
    .map((c) => c.at! - t0);
  const alone = idealFinish(necessary, LIMITS);
  const ideal = idealWithOthers(necessary, LIMITS, others);
  return {
    calls: calls.length,
    rate_limited_429: calls.filter((c) => c.errorCode === 429).length,
    other_errors: calls.filter((c) => !c.ok && c.errorCode !== 429).length,
    messages_per_chat: {
      mean: +(perChat.reduce((a, b) => a + b, 0) / perChat.length).toFixed(2),
      min: Math.min(...perChat),
      max: Math.max(...perChat),
    },
    necessary_per_chat: necessary.length / chats,
    time_to_final_ms: timeToFinal,
    ideal_ms: Math.round(ideal),
    ratio_to_ideal: +(timeToFinal / ideal).toFixed(3),
    ideal_fanout_alone_ms: Math.round(alone),
    ratio_to_fanout_alone_ideal: +(timeToFinal / alone).toFixed(3),
    calls_beside_fanout: beside,
    press_during_fanout_ms: summary(pressMs),
    run_to_checkpoint_during_fanout_ms: summary(runMs),
    interactive_chats_429: interactive429,
    interactive_failed: loops.failures,
  };
}

/** Press → edit in a quiet bridge: only the private chat, through the outbox or straight. */
async function quietPresses(mode: string) {
  loops.failures = 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-press-'));
  const file = path.join(dir, 'bridge.db');
  const fake = await FakeTelegram.start({ limits: LIMITS });
  fake.addChat({ id: PRESS_CHAT, type: 'private' });
  fake.addChat({ id: RUN_CHAT, type: 'private' });
  const inner = new TelegramChannel({ token: fake.token, apiRoot: fake.apiRoot, commands: [] });
  let channel: Channel = inner;
  let close = async () => {};
  if (mode === 'outbox') {
    const o = await import('../src/bridges/outbox/index.ts');
    const db = openBridgeDb({ file });
    await migrateToLatest(db);
    await db.close();
    const store = o.OutboxStore.open(file);
    const outbox = new o.Outbox({ store, inner, limits: o.limitsOf('telegram') });
    outbox.start();
    channel = new o.OutboxChannel(inner, outbox);
    close = async () => {
      await outbox.stop();
      store.close();
    };
  }
  const [took, runs] = await Promise.all([loops.pressLoop(channel), loops.runLoop(channel)]);
  await close();
  await fake.close();
  fs.rmSync(dir, { recursive: true, force: true });
  return {
    press_to_edit_ms: summary(took),
    run_to_checkpoint_ms: summary(runs),
    rate_limited_429: fake.calls.filter((c) => c.errorCode === 429).length,
    interactive_failed: loops.failures,
  };
}

const results: Record<string, Record<string, unknown>> = {};
for (const mode of MODES) {
  results[mode] = {};
  for (const chats of CHAT_COUNTS) {
    process.stderr.write(`fanout: ${mode} × ${chats} chats…\n`);
    results[mode]![`chats_${chats}`] = await scenario({ mode, chats });
  }
  if (PRESSES > 0) results[mode]!.quiet = await quietPresses(mode);
}
console.log(
  JSON.stringify(
    {
      runs: RUNS,
      steps: STEPS,
      step_ms: STEP_MS,
      progress_ms: PROGRESS_MS,
      reaction_ms: REACTION_MS,
      agent_ms: AGENT_MS,
      think_ms: THINK_MS,
      urgencies: BEFORE ? 'before issue 31 (no interactive)' : 'interactive',
      fake_per_chat: LIMITS.perChat,
      goals: {
        rate_limited_429: 0,
        ratio_to_ideal_max: 1.05,
        press_quiet_p50_ms: 50,
        press_during_fanout_p50_ms: 300,
        run_to_checkpoint_p50_ms: 500,
      },
      ...results,
    },
    null,
    2,
  ),
);
