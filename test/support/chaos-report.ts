/**
 * What a chaos run left, as a person and an auditor would count it: runs lost or started twice,
 * decisions applied twice, runs stuck, torn ledger lines (from the ledgers and bridge.db); decided
 * checkpoints whose message still has live buttons, decisions no message shows, the same message
 * sent twice to a chat (from the platform fake's chats and calls); leftover temp files; boot times.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ChaosChat, ChaosPlatform } from './chaos-platforms.ts';

/** What the report is computed from. */
export interface ChaosWorld {
  readonly fake: ChaosPlatform;
  readonly chats: readonly { chat: ChaosChat; ws: string }[];
  /** The specs of every `/run` the bridge took (answered, or redelivered until it did), each unique. */
  readonly specs: readonly string[];
  /** `/run`s a killed serve never answered (Slack, Discord: the person typed it again). */
  readonly unanswered: number;
  readonly bridgeDb: string;
  readonly kills: number;
  /** Spawn → banner of every serve started (ms). */
  readonly boots: readonly number[];
  readonly settled: boolean;
}

/** The figures (issue 39's table). */
export interface ChaosReport {
  platform: string;
  kills: number;
  runs: number;
  checkpointsDecided: number;
  settled: boolean;
  lost: number;
  doubled: number;
  stuck: number;
  tornLines: number;
  liveButtonsOnDecided: number;
  decisionsNotShown: number;
  duplicateSends: number;
  duplicatesPerKill: number;
  /** The repeated texts (first line), for a look at what was repeated. */
  duplicateSamples: string[];
  /** The live decided copies: chat, message id, checkpoint, and the ids bridge.db knows for it. */
  liveSamples: string[];
  leftoverTempFiles: number;
  bootMs: { p50: number; max: number };
  /** Rows of checkpoint_messages left without a message id. */
  copiesWithoutRef: number;
  /** Run folders a kill left before their first ledger line (their /run started again). */
  emptyRunFolders: number;
  /** `/run`s sent to a dying serve and never answered (typed again under a new spec). */
  unansweredRuns: number;
}

const CHECKPOINT = /Checkpoint (\S+) — run (\S+)/;
const CLOSING = new Set(['checkpointResolved', 'checkpointExpired', 'checkpointWithdrawn']);

interface RunFolder {
  id: string;
  status: string;
  closed: Map<string, number>;
  torn: number;
  temps: number;
}

/**
 * A run folder a kill left before its first ledger line (the folder is made, then the line is
 * appended): no run to count. The redelivered /run starts the run under a new id.
 */
export function neverStarted(folder: string): boolean {
  try {
    return fs.statSync(path.join(folder, 'ledger.jsonl')).size === 0;
  } catch {
    return true;
  }
}

function readRun(dir: string, id: string): RunFolder {
  const run: RunFolder = { id, status: 'unknown', closed: new Map(), torn: 0, temps: 0 };
  const folder = path.join(dir, id);
  for (const name of fs.readdirSync(folder)) if (name.endsWith('.tmp')) run.temps++;
  const text = fs.readFileSync(path.join(folder, 'ledger.jsonl'), 'utf8');
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let entry: { events?: { type: string; checkpointId?: string }[] };
    try {
      entry = JSON.parse(line);
    } catch {
      run.torn++;
      continue;
    }
    for (const e of entry.events ?? []) {
      if (CLOSING.has(e.type) && e.checkpointId) {
        run.closed.set(e.checkpointId, (run.closed.get(e.checkpointId) ?? 0) + 1);
      }
    }
  }
  try {
    run.status = (
      JSON.parse(fs.readFileSync(path.join(folder, 'run.json'), 'utf8')) as { status: string }
    ).status;
  } catch {
    // unreadable run.json: status unknown, counted stuck
  }
  return run;
}

const percentile = (xs: readonly number[], p: number): number => {
  if (xs.length === 0) return 0;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
};

/** Counts what the chaos left. */
export function chaosReport(w: ChaosWorld): ChaosReport {
  const runs: RunFolder[] = [];
  let emptyRunFolders = 0;
  const runChat = new Map<string, string>();
  for (const c of w.chats) {
    const dir = path.join(c.ws, '.phasebridge', 'runs');
    if (!fs.existsSync(dir)) continue;
    for (const id of fs.readdirSync(dir)) {
      if (neverStarted(path.join(dir, id))) {
        emptyRunFolders++;
        continue;
      }
      runs.push(readRun(dir, id));
      runChat.set(id, c.chat.ref);
    }
  }
  const db = new Database(w.bridgeDb, { readonly: true });
  let specOf: Map<string, string>;
  let copiesWithoutRef: number;
  let copyRefs: {
    run_id: string;
    checkpoint_id: string;
    chat_ref: string;
    message_ref: string | null;
    state: string;
    decision_shown: number;
  }[];
  try {
    copyRefs = db
      .prepare(
        'select run_id, checkpoint_id, chat_ref, message_ref, state, decision_shown from checkpoint_messages',
      )
      .all() as typeof copyRefs;
    const rows = db.prepare('select id, spec from runs').all() as { id: string; spec: string }[];
    specOf = new Map(rows.map((r) => [r.id, (r.spec ?? '').trim()]));
    copiesWithoutRef = (
      db
        .prepare(`select count(*) as n from checkpoint_messages where message_ref is null`)
        .get() as { n: number }
    ).n;
  } finally {
    db.close();
  }
  const runsOfSpec = new Map<string, number>();
  for (const r of runs) {
    const spec = specOf.get(r.id) ?? '';
    runsOfSpec.set(spec, (runsOfSpec.get(spec) ?? 0) + 1);
  }
  const lost = w.specs.filter((s) => !runsOfSpec.has(s)).length;
  let doubled = w.specs.filter((s) => (runsOfSpec.get(s) ?? 0) > 1).length;
  for (const r of runs) for (const n of r.closed.values()) if (n > 1) doubled++;

  let liveButtonsOnDecided = 0;
  let decisionsNotShown = 0;
  let checkpointsDecided = 0;
  const liveSamples: string[] = [];
  const closedOf = new Map(runs.map((r) => [r.id, r.closed]));
  for (const c of w.chats) {
    const messages = w.fake.messages(c.chat);
    const shown = new Set<string>();
    for (const m of messages) {
      const hit = CHECKPOINT.exec(m.text);
      if (!hit) continue;
      const [, cp, runId] = hit as unknown as [string, string, string];
      const closed = closedOf.get(runId)?.has(cp) === true;
      if (closed && m.live) {
        liveButtonsOnDecided++;
        const known = copyRefs
          .filter((r) => r.run_id === runId && r.checkpoint_id === cp)
          .map((r) => `${r.message_ref ?? 'null'} ${r.state} shown=${r.decision_shown}`);
        if (liveSamples.length < 10) {
          liveSamples.push(
            `${c.chat.ref} message ${m.id}: ${cp} of ${runId}; copies ${known.join('; ')}`,
          );
        }
      }
      if (closed && !m.live) shown.add(`${runId}\n${cp}`);
    }
    for (const r of runs) {
      if (runChat.get(r.id) !== c.chat.ref) continue;
      for (const cp of r.closed.keys()) {
        checkpointsDecided++;
        if (!shown.has(`${r.id}\n${cp}`)) decisionsNotShown++;
      }
    }
  }

  // The same text sent twice to the same chat (every send the fake answered).
  const sends = new Map<string, number>();
  for (const sent of w.fake.sends()) {
    const key = `${sent.chat}\n${sent.text}`;
    sends.set(key, (sends.get(key) ?? 0) + 1);
  }
  let duplicateSends = 0;
  const duplicateSamples: string[] = [];
  for (const [key, n] of sends) {
    if (n < 2) continue;
    duplicateSends += n - 1;
    if (duplicateSamples.length < 10) {
      duplicateSamples.push(`${n}× ${key.split('\n')[1]?.slice(0, 80)}`);
    }
  }
  return {
    platform: w.fake.name,
    kills: w.kills,
    runs: runs.length,
    checkpointsDecided,
    settled: w.settled,
    lost,
    doubled,
    stuck: runs.filter((r) => !['completed', 'failed', 'cancelled'].includes(r.status)).length,
    tornLines: runs.reduce((n, r) => n + r.torn, 0),
    liveButtonsOnDecided,
    decisionsNotShown,
    duplicateSends,
    duplicatesPerKill: w.kills === 0 ? 0 : duplicateSends / w.kills,
    duplicateSamples,
    liveSamples,
    leftoverTempFiles: runs.reduce((n, r) => n + r.temps, 0),
    bootMs: { p50: percentile(w.boots, 0.5), max: Math.max(0, ...w.boots) },
    copiesWithoutRef,
    emptyRunFolders,
    unansweredRuns: w.unanswered,
  };
}
