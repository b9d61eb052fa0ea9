/**
 * Flow runs left `active` or `blocked` (`.flow/runs/<id>/run.yaml`), found without parsing the
 * run.yaml of every finished run each time: a status cache (bridge.db `flow_run_cache`, see
 * FlowStatusCache) remembers each run.yaml's stamp (size, mtime, ctime, inode) and the status it
 * held; a run whose stamp is unchanged and whose status was not active/blocked costs one lstat.
 * Any write changes the stamp (flow's and ours rename a temp file into place: a new inode; an
 * in-place edit moves mtime and ctime, even when the old mtime is put back), so a file changed by
 * another tool is read again. A stamp is only trusted once its mtime is over a second old when
 * seen (git's "racily clean" rule): a same-size rewrite within one timestamp tick of our read
 * would otherwise look unchanged.
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
  /** `size:mtime_ns:ctime_ns:ino` when it was read. */
  stamp: string;
  /** Its `state.status` then ('' when it did not parse). */
  status: string;
}

/** Where the statuses of a workspace's flow runs are remembered between reads. */
export interface FlowStatusCache {
  /** The entries of one workspace, by run id. */
  load(workspace: string): Promise<Map<string, FlowStatusEntry>>;
  /** Stores `put` (replacing) and forgets `gone` (run folders that disappeared). */
  save(workspace: string, put: readonly FlowStatusEntry[], gone: readonly string[]): Promise<void>;
}

/** A stamp older than this (ms) when seen is trusted; a younger file is read again next time. */
export const RACY_MS = 1000;

const INTERRUPTED = new Set(['active', 'blocked']);

const list = (v: unknown): string[] => (Array.isArray(v) ? v.map(String) : []);

/** The stamp of `file` and whether it may be trusted; null when missing or not a plain file. */
function stampOf(file: string, now: number): { stamp: string; trusted: boolean } | null {
  let st: fs.BigIntStats;
  try {
    st = fs.lstatSync(file, { bigint: true });
  } catch {
    return null;
  }
  if (!st.isFile()) return null;
  const stamp = `${st.size}:${st.mtimeNs}:${st.ctimeNs}:${st.ino}`;
  return { stamp, trusted: Number(st.mtimeMs) < now - RACY_MS };
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

/**
 * The workspace's flow runs that are active or blocked, in run id order. With a cache, a
 * finished run whose run.yaml did not change since it was last read is not read again.
 */
export async function flowSessions(
  workspace: string,
  cache?: FlowStatusCache,
): Promise<InterruptedSession[]> {
  const runs = path.join(path.resolve(workspace), FLOW_DIR, 'runs');
  let ids: string[];
  try {
    ids = fs.readdirSync(runs).sort();
  } catch {
    return [];
  }
  const known = cache ? await cache.load(path.resolve(workspace)) : new Map();
  const now = Date.now();
  const put: FlowStatusEntry[] = [];
  const out: InterruptedSession[] = [];
  for (const id of ids) {
    const file = path.join(runs, id, 'run.yaml');
    const seen = stampOf(file, now);
    if (seen === null) continue;
    const before = known.get(id);
    if (before?.stamp === seen.stamp && !INTERRUPTED.has(before.status)) continue;
    const doc = readDoc(workspace, file);
    const status = doc === undefined ? '' : String(doc?.state?.status ?? '');
    if (seen.trusted && (before?.stamp !== seen.stamp || before.status !== status)) {
      put.push({ runId: id, stamp: seen.stamp, status });
    }
    if (doc !== undefined && INTERRUPTED.has(status)) out.push(sessionOf(id, doc));
  }
  if (cache) {
    const present = new Set(ids);
    const gone = [...known.keys()].filter((id) => !present.has(id));
    if (put.length > 0 || gone.length > 0) await cache.save(path.resolve(workspace), put, gone);
  }
  return out;
}
