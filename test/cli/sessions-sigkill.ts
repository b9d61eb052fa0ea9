/**
 * The harness of the SIGKILL stories (`sessions-sigkill*.test.ts`, issue 14, seed 004's resume
 * table): a coordinator session run by `phasebridge serve` as a child process (the coordinator
 * preset on the embedded queue, the demo agent at ~150 ms a step, Telegram as the local fake),
 * SIGKILLed as soon as state.json shows a state (watched, not slept on), then served again with
 * the session's offer announced. The stories are split over three files so that the forks share
 * them (each story is a whole session, twice started).
 *
 * Debugging: PB_DEBUG=1 logs each wait and keeps serve's debug log in the temp folder, PB_KEEP=1
 * keeps that folder (its path is printed).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, onTestFinished } from 'vitest';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import type { RunEvent } from '../../src/engine/events.ts';
import { readLedger } from '../../src/engine/ledger/ledger-file.ts';
import { FakeTelegram, type FakeUser, type StoredMessage } from '../fakes/telegram.ts';
import { slow } from '../support/slowdown.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const BOB: FakeUser = { id: 502, first_name: 'Bob', username: 'bob' };
const TEAM = { id: -1001, type: 'supergroup' as const, title: 'Team' };
const AGENT = 'tasks=4 taskfile=.coordinator/tasks.json tests=3/3 write=agent-runs.txt';
/** The coordinator preset's steps, in order. */
export const STEPS = ['discover', 'plan', 'execute', 'merge', 'verify', 'summarize'];
/** Each story's deadline: two serve start-ups and a whole session. */
export const TIMEOUT_MS = slow(120_000);

/** The coordinator's `.coordinator/state.json`, as far as the stories read it. */
export type State = {
  state: string;
  session_id: string;
  phasebridge_run_id: string;
  tasks: Record<string, string[]>;
  verification: Record<string, unknown>;
  summary: string | null;
};

const cleanups: (() => Promise<void> | void)[] = [];

/** Undoes what `setup` did, last first. */
async function cleanUp(): Promise<void> {
  for (const c of cleanups.splice(0).reverse()) await c();
}

/** Resolves when `check` holds, looking again on every change under `dir` (and every 25 ms). */
export function when<T>(
  dir: string,
  check: () => T | null | undefined | false,
  what: string,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const watcher = fs.watch(dir, { recursive: true }, () => look());
    // Node's recursive watch on Linux emits ENOENT when a subfolder goes while it scans it (the
    // agents' folders come and go): the poll below still looks, so the watcher just stops.
    watcher.on('error', () => watcher.close());
    const safety = setInterval(() => look(), 25);
    const deadline = setTimeout(
      () => done(new Error(`timed out waiting for ${what}`)),
      slow(60_000),
    );
    if (process.env.PB_DEBUG) console.log(new Date().toISOString(), 'waiting for', what);
    function done(err: Error | null, value?: T) {
      watcher.close();
      clearInterval(safety);
      clearTimeout(deadline);
      if (err) reject(err);
      else resolve(value as T);
    }
    function look() {
      try {
        const v = check();
        if (v) done(null, v);
      } catch (err) {
        done(err as Error);
      }
    }
    look();
  });
}

/** One interruption: a home, a workspace bound to the team chat, Telegram and serve processes. */
export async function setup() {
  // Per test, not a module-level afterEach: the slow tier's files share this module per fork,
  // so a hook registered at import would belong to the first file that imported it only.
  onTestFinished(cleanUp);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-sigkill-'));
  const home = path.join(root, 'home');
  const ws = path.join(root, 'ws');
  fs.mkdirSync(ws);
  const fake = await FakeTelegram.start();
  fake.addChat(TEAM);
  if (!process.env.PB_KEEP) cleanups.push(() => fs.rmSync(root, { recursive: true, force: true }));
  else console.log('ROOT', root);
  // Agents held after the kill wait for this file (the demo agent's `waitfor`).
  const gate = path.join(root, 'go');
  const release = () => fs.writeFileSync(gate, '');
  cleanups.push(release);
  cleanups.push(() => fake.close());
  fs.mkdirSync(home);
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  const binding = await repos.bindings.bind({ chatRef: `telegram:${TEAM.id}`, workspace: ws });
  await repos.allowlist.allow({ bindingId: binding.id }, 'telegram', String(BOB.id), 'approver');
  await db.close();

  let child: ChildProcess | null = null;
  /**
   * Starts serve; agents take 150 ms. After the kill they are `held` until `release()`: start-up
   * hands the dead process's jobs back at once, so the interrupted step runs again while the
   * offer is posted and pressed, and must still be running then (waited for, not slept on).
   */
  const serve = async (held = false) => {
    const log = path.join(root, `serve-${held ? 'again' : 'first'}.log`);
    const c = spawn(process.execPath, [BIN, 'serve', '--concurrency', '4'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        PHASEBRIDGE_HOME: home,
        PHASEBRIDGE_PORT: '0',
        // The suite's agent priority (vitest.config.ts): the env above is built from scratch.
        ...(process.env.PHASEBRIDGE_AGENT_NICE === undefined
          ? {}
          : { PHASEBRIDGE_AGENT_NICE: process.env.PHASEBRIDGE_AGENT_NICE }),
        LOG_LEVEL: process.env.PB_DEBUG ? 'debug' : 'silent',
        TELEGRAM_BOT_TOKEN: fake.token,
        TELEGRAM_API_ROOT: fake.apiRoot,
        DEMO_AGENT_BEHAVIOUR: `sleep=150 ${AGENT}${held ? ` waitfor=${gate}` : ''}`,
      },
      stdio: process.env.PB_DEBUG
        ? ['ignore', fs.openSync(log, 'a'), fs.openSync(log, 'a')]
        : 'ignore',
    });
    child = c;
    cleanups.push(async () => {
      if (c.exitCode === null && c.signalCode === null) {
        c.kill('SIGTERM');
        await new Promise((r) => c.once('exit', r));
      }
    });
    // Up once it polls Telegram (its chats were caught up before): a long poll is held.
    await when(root, () => fake.waitingPolls > 0, 'serve to poll Telegram');
  };
  /** Agents started from now on wait for `release()` again. */
  const hold = () => fs.rmSync(gate, { force: true });
  /** SIGKILLs serve; `release`: lets agents it held go first (they must finish before). */
  const kill = async (opts: { release?: boolean } = {}) => {
    const c = child!;
    c.kill('SIGKILL');
    if (c.exitCode === null && c.signalCode === null) await new Promise((r) => c.once('exit', r));
    if (opts.release) release();
    // The agents it started live on (their own process groups): wait for them to finish.
    await when(ws, () => agentsIn(ws).length === 0, 'the orphaned agents to finish');
  };
  const stateJson = (): State | null => {
    try {
      return JSON.parse(fs.readFileSync(path.join(ws, '.coordinator', 'state.json'), 'utf8'));
    } catch {
      return null;
    }
  };
  const messages = (re: RegExp) => fake.botMessages(TEAM.id).filter((m) => re.test(m.text ?? ''));
  const press = (m: StoredMessage, label: string) =>
    fake.userPresses({ chatId: TEAM.id, messageId: m.message_id, from: BOB, label });
  const answerTo = (update: Record<string, unknown>) =>
    when(
      ws,
      () => {
        const id = String((update.callback_query as { id: string }).id);
        const a = fake.callbackAnswers.get(id)?.text;
        return typeof a === 'string' ? a : null;
      },
      'the private answer',
    );
  const say = (text: string) => fake.userSends({ chat: TEAM, from: BOB, text });
  /** Open plan checkpoints (with an Approve button). */
  const plans = () =>
    messages(/Checkpoint/).filter((m) =>
      ((m.replyMarkup?.inline_keyboard ?? []) as { text: string }[][])
        .flat()
        .some((b) => b.text === 'Approve'),
    );
  const runsOf = (step: string) =>
    (fs.existsSync(path.join(ws, 'agent-runs.txt'))
      ? fs.readFileSync(path.join(ws, 'agent-runs.txt'), 'utf8').split('\n')
      : []
    ).filter((l) => l.startsWith(`${step}:`)).length;
  const archived = (): State | null => {
    const dir = fs.readdirSync(ws).find((f) => f.startsWith('.coordinator.archive.'));
    return dir ? JSON.parse(fs.readFileSync(path.join(ws, dir, 'state.json'), 'utf8')) : null;
  };
  const events = (runId: string): RunEvent[] =>
    (
      readLedger(path.join(ws, '.phasebridge', 'runs', runId, 'ledger.jsonl')).entries as {
        events: RunEvent[];
      }[]
    ).flatMap((e) => e.events);
  return {
    ws,
    home,
    fake,
    serve,
    release,
    hold,
    kill,
    stateJson,
    messages,
    press,
    answerTo,
    say,
    plans,
    runsOf,
    archived,
    events,
  };
}

/** Demo agents still running in the workspace (found in /proc: their cwd is the workspace). */
function agentsIn(ws: string): number[] {
  const pids: number[] = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (!fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes('demo-agent')) continue;
      if (fs.readlinkSync(`/proc/${p}/cwd`) === fs.realpathSync(ws)) pids.push(Number(p));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** One interruption's handles (see `setup`). */
export type Harness = Awaited<ReturnType<typeof setup>>;

/** Starts a supervised coordinator run from chat and SIGKILLs serve once `reached` holds. */
export async function interrupt(h: Harness, reached: (s: State) => boolean, state: string) {
  await h.serve();
  h.say('/run coordinator ship it');
  let approved = false;
  await when(
    h.ws,
    () => {
      const s = h.stateJson();
      // PLANNING is caught waiting for confirmation (its checkpoint posted), the other states
      // while their step's agent works (its job taken, the run indexed).
      const busy = state === 'PLANNING' ? h.plans().length === 1 : agentsIn(h.ws).length > 0;
      if (s && reached(s) && busy) return true;
      // Past the plan: confirm it (once) on the way to a later state.
      if (!approved && state !== 'PLANNING' && s?.state === 'PLANNING' && h.plans().length === 1) {
        approved = true;
        h.press(h.plans()[0]!, 'Approve');
      }
      return false;
    },
    `state ${state}`,
  );
  await h.kill();
  const before = h.stateJson()!;
  expect(before.state).toBe(state);
  return before;
}

/**
 * Serve again, its agents held until `h.release()`: the session is announced with the seed's
 * summary; the offer message.
 */
export async function announced(h: Harness, before: State) {
  await h.serve(true);
  const offer = await when(
    h.ws,
    () => h.messages(/Interrupted coordinator session/)[0],
    'the offer',
  );
  expect(offer.text).toContain(`Session: ${before.session_id}`);
  expect(offer.text).toContain(`State: ${before.state}`);
  if (before.state !== 'EXECUTING') {
    expect(offer.text).toContain(`Completed: ${before.tasks.completed.join(', ') || 'none'}`);
    expect(offer.text).toContain(`In progress: ${before.tasks.in_progress.join(', ') || 'none'}`);
  } else {
    // Start-up already handed the dead process's task jobs back, so tasks may have moved on.
    const done = /\nCompleted: (.*)\n/.exec(offer.text ?? '')![1]!.split(', ');
    for (const t of before.tasks.completed) expect(done).toContain(t);
  }
  return offer;
}

/** A state to kill serve in, its step, and how state.json shows it reached. */
export type Case = { state: string; step: string; reached: (s: State) => boolean };

/** The coordinator's states, each with the step that runs in it. */
export const CASES: Case[] = [
  { state: 'DISCOVERING', step: 'discover', reached: (s) => s.state === 'DISCOVERING' },
  { state: 'PLANNING', step: 'plan', reached: (s) => s.state === 'PLANNING' },
  {
    state: 'EXECUTING',
    step: 'execute',
    reached: (s) =>
      s.state === 'EXECUTING' && s.tasks.completed.length >= 1 && s.tasks.in_progress.length >= 1,
  },
  { state: 'MERGING', step: 'merge', reached: (s) => s.state === 'MERGING' },
  { state: 'VERIFYING', step: 'verify', reached: (s) => s.state === 'VERIFYING' },
  { state: 'SUMMARIZING', step: 'summarize', reached: (s) => s.state === 'SUMMARIZING' },
];

/**
 * Killed in `c.state`, served again and resumed from the offer: Resume does what the seed's table
 * says (the interrupted step runs again once, finished steps never, the plan is confirmed again).
 */
export async function resumeStory(c: Case): Promise<void> {
  const h = await setup();
  const before = await interrupt(h, c.reached, c.state);
  const runId = before.phasebridge_run_id;
  const ranBefore = Object.fromEntries(STEPS.map((s) => [s, h.runsOf(s)]));
  const offer = await announced(h, before);
  // Tasks the offer showed completed (the message is edited later).
  const shownDone = /\nCompleted: (.*)\n/.exec(offer.text ?? '')![1]!.split(', ').length;

  expect(await h.answerTo(h.press(offer, 'Resume'))).toMatch(
    new RegExp(`^Session ${before.session_id} resumed: run ${runId} is `),
  );
  h.release();
  // The plan waits for confirmation again: shown again after a kill in PLANNING (a new copy),
  // reached anew after a kill in DISCOVERING.
  if (c.state === 'PLANNING' || c.state === 'DISCOVERING') {
    const again = await when(
      h.ws,
      () => h.plans().find((m) => m.message_id > offer.message_id),
      'the plan again',
    );
    h.press(again, 'Approve');
  }
  const final = await when(h.ws, () => h.archived(), 'the session to complete');
  expect(final.state).toBe('IDLE');
  expect(final.session_id).toBe(before.session_id);
  expect([...final.tasks.completed].sort()).toEqual(['t1', 't2', 't3', 't4']);
  expect(final.verification.tests_passed).toBe(3);
  expect(typeof final.summary).toBe('string');

  const ev = h.events(runId);
  const index = STEPS.indexOf(c.step);
  for (const step of STEPS.slice(0, index)) {
    // Completed before the kill: never run again.
    if (step === 'execute') continue;
    expect(h.runsOf(step), step).toBe(ranBefore[step]);
    expect(ev.filter((e) => e.type === 'stepCompleted' && e.stepId === step)).toHaveLength(1);
  }
  if (c.step === 'execute') {
    // Finished tasks kept their first attempt and never ran again; every unfinished one (in
    // flight or not started) ran once after the restart. (The agents of tasks in flight at the
    // kill finished as orphans before ranBefore was counted.)
    const queued = ev.flatMap((e) => (e.type === 'taskQueued' ? [`${e.taskId}:${e.attempt}`] : []));
    for (const t of before.tasks.completed) {
      expect(queued.filter((q) => q.startsWith(`${t}:`))).toEqual([`${t}:1`]);
    }
    const runs = h.runsOf('execute');
    expect(runs).toBeLessThanOrEqual(ranBefore.execute! + 4 - before.tasks.completed.length);
    expect(runs).toBeGreaterThanOrEqual(ranBefore.execute! + 4 - shownDone);
  } else if (c.step !== 'plan') {
    // The interrupted step ran (again) once after the Resume and completed once.
    expect(h.runsOf(c.step)).toBe(ranBefore[c.step]! + 1);
    expect(ev.filter((e) => e.type === 'stepCompleted' && e.stepId === c.step)).toHaveLength(1);
  }
  // The offer says who chose what.
  await when(
    h.ws,
    () => h.messages(/Interrupted coordinator session/)[0]!.text?.includes('Resumed by @bob'),
    'the offer edited',
  );
}
