/**
 * The chaos run of issue 39, shared by `bench/chaos.ts` and its small version in the suite:
 * `phasebridge serve` (the dist bundle) against the fake Telegram, demo runs started from chat
 * and their checkpoints pressed (some twice) while serve is SIGKILLed `kills` times at seeded
 * random moments (each restart also redelivers the updates the dead process had not confirmed);
 * then a settle phase with one serve until every run ended and the outbox is empty. What a
 * person would see is counted from the fake's chats, the ledgers and bridge.db (chaos-report.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { migrateToLatest, openBridgeDb } from '../../src/db/connection.ts';
import { createRepositories } from '../../src/db/repositories/index.ts';
import {
  type ChaosChat,
  type ChaosPlatformName,
  chaosPlatform,
  type SentRun,
} from './chaos-platforms.ts';
import { type ChaosReport, type ChaosWorld, chaosReport, neverStarted } from './chaos-report.ts';

export type { ChaosPlatformName } from './chaos-platforms.ts';
export type { ChaosReport } from './chaos-report.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const BANNER = 'phasebridge is running';

/** What one chaos run does. */
export interface ChaosOptions {
  /** The platform whose fake serve talks to (default Telegram). */
  readonly platform?: ChaosPlatformName;
  readonly kills: number;
  readonly seed: number;
  /** Chats, each bound to a workspace of its own, each with `runsPerChat` runs in flight. */
  readonly chats: number;
  readonly runsPerChat: number;
  /** Telegram supergroups (20 messages a minute each) instead of private chats (Telegram only). */
  readonly groups?: boolean;
  /** serve lives this long after its banner before the kill (uniform in the range, ms). */
  readonly upMs: readonly [number, number];
  /** The settle phase gives up after this long (ms). */
  readonly settleMs: number;
  /** Demo agent time per step (ms). */
  readonly agentMs?: number;
  readonly log?: (line: string) => void;
}

/** A seeded generator in [0, 1) (mulberry32): the same seed, the same kill moments. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every 25 ms until it holds or `ms` passed; true when it held. */
async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(25);
  }
  return check();
}

/** A /run a person sees no answer to after this long is typed again (platforms that do not redeliver). */
const UNANSWERED_MS = 8000;

/** Runs the chaos and reports (the temp folder is removed unless PB_KEEP is set). */
export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? (() => {});
  const rand = seeded(o.seed);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-chaos-'));
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  const fake = await chaosPlatform(o.platform ?? 'telegram');
  const chats: { chat: ChaosChat; ws: string }[] = [];
  const db = openBridgeDb({ file: path.join(home, 'bridge.db') });
  await migrateToLatest(db);
  const repos = createRepositories(db);
  for (let i = 0; i < o.chats; i++) {
    const chat = fake.chat(i, o.groups === true);
    const ws = path.join(root, `ws${i}`);
    fs.mkdirSync(ws);
    const binding = await repos.bindings.bind({ chatRef: chat.ref, workspace: ws });
    await repos.allowlist.allow({ bindingId: binding.id }, fake.name, chat.userId, 'approver');
    chats.push({ chat, ws });
  }
  await db.close();

  const boots: number[] = [];
  let child: ChildProcess | undefined;
  const serve = async (): Promise<void> => {
    const started = Date.now();
    const c = spawn(process.execPath, [BIN, 'serve', '--concurrency', '4'], {
      cwd: root,
      env: {
        PATH: process.env.PATH ?? '',
        PHASEBRIDGE_HOME: home,
        PHASEBRIDGE_PORT: '0',
        LOG_LEVEL: 'silent',
        ...fake.env(),
        DEMO_AGENT_BEHAVIOUR: `sleep=${o.agentMs ?? 100}`,
      },
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    child = c;
    let out = '';
    const up = await new Promise<boolean>((resolve) => {
      const deadline = setTimeout(() => resolve(false), 120_000);
      c.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes(BANNER)) {
          clearTimeout(deadline);
          resolve(true);
        }
      });
      c.once('exit', () => {
        clearTimeout(deadline);
        resolve(out.includes(BANNER));
      });
    });
    if (!up) throw new Error(`serve did not come up (exit ${c.exitCode}): ${out.slice(-500)}`);
    boots.push(Date.now() - started);
    c.stdout!.resume();
  };
  const exited = (c: ChildProcess) =>
    c.exitCode !== null || c.signalCode !== null
      ? Promise.resolve()
      : new Promise<void>((r) => c.once('exit', () => r()));

  // The people: start runs while fewer than runsPerChat are open; press what shows Approve.
  let specs = 0;
  const sent: { spec: string; chat: string; run: SentRun; at: number }[] = [];
  /** A /run the bridge answered, or one it may still answer (not given up on yet). */
  const counted = (s: (typeof sent)[number]) =>
    s.run.answered() || Date.now() - s.at < UNANSWERED_MS;
  const pressed = new Map<string, number>();
  let starting = true;
  let people = true;
  /** The runs of `ws` not ended, each with what its run.json says (or why it is unreadable). */
  const openRunsOf = (ws: string): { id: string; why: string }[] => {
    const dir = path.join(ws, '.phasebridge', 'runs');
    if (!fs.existsSync(dir)) return [];
    const open: { id: string; why: string }[] = [];
    for (const id of fs.readdirSync(dir)) {
      if (neverStarted(path.join(dir, id))) continue;
      try {
        const s = JSON.parse(fs.readFileSync(path.join(dir, id, 'run.json'), 'utf8')) as {
          status: string;
          blocked?: unknown;
        };
        if (!['completed', 'failed', 'cancelled'].includes(s.status)) {
          open.push({ id, why: `${s.status} ${JSON.stringify(s.blocked ?? null)}` });
        }
      } catch (err) {
        // Being written: counted open.
        open.push({ id, why: `run.json unreadable (${(err as Error).message})` });
      }
    }
    return open;
  };
  const openRuns = (ws: string): number => openRunsOf(ws).length;
  const startedIn = (c: (typeof chats)[number]) => {
    const dir = path.join(c.ws, '.phasebridge', 'runs');
    if (!fs.existsSync(dir)) return 0;
    return fs.readdirSync(dir).filter((id) => !neverStarted(path.join(dir, id))).length;
  };
  const act = async (): Promise<void> => {
    while (people) {
      for (const c of chats) {
        const mine = sent.filter((s) => s.chat === c.chat.ref && counted(s)).length;
        const waiting = mine - startedIn(c);
        if (starting && openRuns(c.ws) + Math.max(0, waiting) < o.runsPerChat) {
          const spec = `chaos-${++specs}`;
          sent.push({ spec, chat: c.chat.ref, run: fake.run(c.chat, spec), at: Date.now() });
        }
        for (const m of fake.messages(c.chat)) {
          if (!m.approve) continue;
          const key = `${c.chat.ref}/${m.id}`;
          const last = pressed.get(key);
          // Pressed again only if nothing came of it (the press died with a killed serve).
          if (last !== undefined && Date.now() - last < 3000) continue;
          pressed.set(key, Date.now());
          try {
            fake.press(c.chat, m.id);
            if (rand() < 0.3) fake.press(c.chat, m.id); // a double press
          } catch {
            // the buttons went meanwhile
          }
        }
      }
      await sleep(50);
    }
  };
  const acting = act();

  const killedAt: number[] = [];
  try {
    for (let k = 0; k < o.kills; k++) {
      await serve();
      const [lo, hi] = o.upMs;
      await sleep(lo + rand() * (hi - lo));
      const c = child!;
      c.kill('SIGKILL');
      killedAt.push(Date.now());
      await exited(c);
      if ((k + 1) % 10 === 0) log(`chaos: ${k + 1} kills`);
    }
    // Settle: one serve until every run ended and nothing waits in the outbox, or the deadline.
    starting = false;
    await serve();
    const bridgeDb = path.join(home, 'bridge.db');
    const quiet = () => {
      if (chats.some((c) => openRuns(c.ws) > 0)) return false;
      const expected = sent.filter((s) => s.run.answered()).length;
      if (expected > chats.reduce((n, c) => n + startedIn(c), 0)) return false;
      const ro = new Database(bridgeDb, { readonly: true });
      try {
        const open = ro
          .prepare(`select count(*) as n from outbox where state in ('pending', 'attempted')`)
          .get() as { n: number };
        return open.n === 0;
      } finally {
        ro.close();
      }
    };
    const settled = await until(quiet, o.settleMs);
    // Quiet for a moment: the last confirmation's follow-up edits (decisions shown) go out.
    if (settled) await until(() => false, 1500);
    log(`chaos: settled=${settled}`);
    if (!settled) {
      // Say what kept it from settling: a run still open, a /run never started, the outbox.
      const open = chats.map((c) => openRuns(c.ws)).reduce((a, b) => a + b, 0);
      const answered = sent.filter((s) => s.run.answered()).length;
      const unstarted = answered - chats.reduce((n, c) => n + startedIn(c), 0);
      const ro = new Database(bridgeDb, { readonly: true });
      const rows = ro
        .prepare(
          `select state, urgency, count(*) as n from outbox where state in ('pending', 'attempted') group by 1, 2`,
        )
        .all();
      ro.close();
      log(
        `chaos: not settled: ${open} runs open, ${unstarted} /run not started, outbox ${JSON.stringify(rows)}`,
      );
      for (const c of chats) {
        for (const r of openRunsOf(c.ws)) log(`chaos: open ${r.id}: ${r.why}`);
      }
    }
    people = false;
    await acting;
    const c = child!;
    c.kill('SIGTERM');
    await exited(c);
    const world: ChaosWorld = {
      fake,
      chats: chats.map((x) => ({ chat: x.chat, ws: x.ws })),
      specs: sent.filter((s) => s.run.answered()).map((s) => s.spec),
      unanswered: sent.length - sent.filter((s) => s.run.answered()).length,
      bridgeDb,
      kills: o.kills,
      boots,
      settled,
    };
    return chaosReport(world);
  } finally {
    people = false;
    await acting.catch(() => undefined);
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited(child);
    }
    await fake.close();
    if (process.env.PB_KEEP) log(`chaos: kept ${root}`);
    else fs.rmSync(root, { recursive: true, force: true });
  }
}
