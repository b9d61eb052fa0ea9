/**
 * Flow runs left `active` or `blocked` (`.flow/runs/<id>/run.yaml`), found without reading the
 * run.yaml of every finished run each time. A status cache (bridge.db `flow_run_cache`, see
 * FlowStatusCache) remembers the stamp of `.flow/runs` (a folder added or removed changes it),
 * the runs that are not settled (read on every lookup) and, for each settled (finished) run, its
 * run.yaml's stamp (size, mtime, ctime, inode) and status.
 *  - Listing unchanged: only the open runs are read; the finished ones cost nothing. Flow writes
 *    a run until its terminal transition only (seed 003: SessionEnd and /flow:resume touch
 *    active and blocked runs), so every write of flow's own is to an open run or a new folder.
 *  - Listing changed (a run created or removed): every run.yaml is stat'ed, and one whose stamp
 *    moved is read again. So a hand edit of a finished run.yaml (rename or in place, even with
 *    the old mtime put back: ctime moves) is seen at the next listing change, or at once with
 *    `phasebridge sessions list --rescan`.
 * A stamp is only trusted once its mtime is over a second old when seen (git's "racily clean"
 * rule): a same-size rewrite within one timestamp tick of our read would otherwise look unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { FLOW_DIR } from '../../engine/layouts/flow/format.ts';
import { readTextInside } from '../../engine/ledger/safe-path.ts';
import type { InterruptedSession } from './sessions.ts';

/** What the cache holds of one run.yaml. */
export interface FlowStatusEntry {
  runId: string;
  /** `size:mtime_ms:ctime_ms:ino` when it was read (times with µs digits). */
  stamp: string;
  /** Its `state.status` then ('' when it did not parse). */
  status: string;
}

/** What a workspace's lookup needs first (small: no settled run in it). */
export interface FlowCacheHead {
  /** Stamp of `.flow/runs` when it was last listed ('' when too young to trust). */
  dirStamp: string;
  /** Runs read on every lookup: active, blocked, unparseable, or too young to trust. */
  open: string[];
}

/** What one lookup stores. */
export interface FlowCacheUpdate extends FlowCacheHead {
  /** Settled runs to remember (replacing their entry). */
  put: readonly FlowStatusEntry[];
  /** Settled entries to forget (folder gone, or no longer settled). */
  gone: readonly string[];
}

/** Where the statuses of a workspace's flow runs are remembered between reads. */
export interface FlowStatusCache {
  /** The workspace's listing stamp and open runs, or null when never looked at. */
  head(workspace: string): Promise<FlowCacheHead | null>;
  /** The settled runs of one workspace, by run id (read only when the listing changed). */
  load(workspace: string): Promise<Map<string, FlowStatusEntry>>;
  /** Stores a lookup's result. */
  save(workspace: string, update: FlowCacheUpdate): Promise<void>;
}

/** A stamp older than this (ms) when seen is trusted; a younger file is read again next time. */
export const RACY_MS = 1000;

const INTERRUPTED = new Set(['active', 'blocked']);

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** The stamp of `file` and whether it may be trusted; null when missing or not a plain file. */
function stampOf(file: string, now: number): { stamp: string; trusted: boolean } | null {
  // Plain lstat (no bigint): the cheapest call, µs-precise times are enough beside the inode.
  let st: fs.Stats | undefined;
  try {
    st = fs.lstatSync(file, { throwIfNoEntry: false });
  } catch {
    return null; // a stray file where a run folder should be (ENOTDIR), or unreadable
  }
  if (st === undefined || !st.isFile()) return null;
  const stamp = `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
  return { stamp, trusted: st.mtimeMs < now - RACY_MS };
}

type FlowDoc = { state?: Record<string, unknown> } | null;

function readDoc(workspace: string, file: string): FlowDoc | undefined {
  try {
    return parse(readTextInside(workspace, file) ?? 'null', { version: '1.1' }) as FlowDoc;
  } catch {
    return undefined;
  }
}

function sessionOf(id: string, doc: FlowDoc): InterruptedSession {
  const status = String(doc?.state?.status ?? '');
  const done = list(doc?.state?.completed_activities);
  const reason = doc?.state?.blocked_reason;
  const phase = String(doc?.state?.current_phase ?? '');
  const last = done.at(-1);
  return {
    kind: 'flow',
    session: id,
    state: status,
    runId: id,
    completed: done,
    inProgress: phase === '' ? [] : [phase],
    ...(typeof reason === 'string' ? { blockedReason: reason } : {}),
    nextAction: `${status === 'blocked' ? 'retry' : 'resume'} phase ${phase}${last ? ` (last recorded activity: ${last})` : ' (no activity recorded yet)'}`,
  };
}

/** Reads one run.yaml: its session when interrupted, and whether it is settled (finished). */
function look(workspace: string, file: string, id: string, now: number) {
  const seen = stampOf(file, now);
  if (seen === null) return null;
  const doc = readDoc(workspace, file);
  const status = doc === undefined ? '' : String(doc?.state?.status ?? '');
  const interrupted = doc !== undefined && INTERRUPTED.has(status);
  return {
    entry: { runId: id, stamp: seen.stamp, status },
    session: interrupted ? sessionOf(id, doc) : null,
    // Finished, parsed, and old enough to trust its stamp: not read again.
    settled: seen.trusted && doc !== undefined && !interrupted,
  };
}

/**
 * The workspace's flow runs that are active or blocked, in run id order. With a cache: while
 * `.flow/runs` lists the same folders as last time, only the runs that were not settled then
 * (active, blocked, unparseable, or written within the last second) are read; when the listing
 * changed, every run.yaml is stat'ed and those whose stamp changed are read again.
 */
export async function flowSessions(
  workspace: string,
  cache?: FlowStatusCache,
  opts: { rescan?: boolean } = {},
): Promise<InterruptedSession[]> {
  const ws = path.resolve(workspace);
  const runs = path.join(ws, FLOW_DIR, 'runs');
  const now = Date.now();
  let dir: fs.Stats | undefined;
  try {
    dir = fs.lstatSync(runs, { throwIfNoEntry: false });
  } catch {
    return [];
  }
  if (dir === undefined || !dir.isDirectory()) return [];
  const dirStamp = dir.mtimeMs < now - RACY_MS ? `${dir.mtimeMs}:${dir.ctimeMs}:${dir.ino}` : '';
  const head = cache && opts.rescan !== true ? await cache.head(ws) : null;
  const put: FlowStatusEntry[] = [];
  const open: string[] = [];
  const out: InterruptedSession[] = [];
  if (cache && head !== null && dirStamp !== '' && head.dirStamp === dirStamp) {
    // Same folders as last time: the settled runs are not even stat'ed.
    for (const id of head.open) {
      const r = look(ws, path.join(runs, id, 'run.yaml'), id, now);
      if (r?.session) out.push(r.session);
      if (r?.settled) put.push(r.entry);
      else open.push(id);
    }
    if (put.length > 0) await cache.save(ws, { dirStamp, open, put, gone: [] });
    return out;
  }
  let ids: string[];
  try {
    ids = fs.readdirSync(runs).sort();
  } catch {
    return [];
  }
  const known = cache ? await cache.load(ws) : new Map<string, FlowStatusEntry>();
  for (const id of ids) {
    const file = path.join(runs, id, 'run.yaml');
    const before = known.get(id);
    if (before !== undefined && before.stamp === stampOf(file, now)?.stamp) continue;
    const r = look(ws, file, id, now);
    if (r === null) continue;
    if (r.session) out.push(r.session);
    if (r.settled) put.push(r.entry);
    else open.push(id);
  }
  if (cache) {
    const present = new Set(ids);
    const gone = [...known.keys()].filter((id) => !present.has(id) || open.includes(id));
    await cache.save(ws, { dirStamp, open, put, gone });
  }
  return out;
}
