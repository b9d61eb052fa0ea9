/**
 * Interrupted flow runs found through bridge.db's status cache (issue 14: start-up offers and
 * `phasebridge sessions` must not cost a read of every finished run): while `.flow/runs` lists
 * the same folders, a finished run is neither opened nor stat'ed again, and what flow itself
 * writes is still seen (a new run, an active run that blocks or finishes). A hand edit of a
 * finished run.yaml (renamed into place, or in place with the same size and the old mtime put
 * back) is seen when the listing changes, or at once with rescan. Real files, a real bridge.db.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type BridgeDb, migrateToLatest, openBridgeDb } from '../../../src/db/connection.ts';
import { FlowRunCacheRepo } from '../../../src/db/repositories/flow-run-cache.ts';
import { flowSessions } from '../../../src/jobs/orchestrator/flow-sessions.ts';
import { findInterruptedSessions } from '../../../src/jobs/orchestrator/sessions.ts';

const HOUR_AGO = new Date(Date.now() - 3_600_000);

let root: string;
let ws: string;
let db: BridgeDb;
let cache: FlowRunCacheRepo;

beforeEach(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-flow-sessions-'));
  ws = path.join(root, 'ws');
  fs.mkdirSync(ws);
  db = openBridgeDb({ file: path.join(root, 'bridge.db') });
  await migrateToLatest(db);
  cache = new FlowRunCacheRepo(db.kysely);
});
afterEach(async () => {
  vi.restoreAllMocks();
  await db.close();
  fs.rmSync(root, { recursive: true, force: true });
});

const runYaml = (id: string, status: string, extra = '') =>
  `apiVersion: flow.synapti.ai/v1
kind: FlowRun
metadata:
  id: ${id}
  workflow: start-issue
  created_at: "2026-05-20T14:30:00Z"
state:
  status: ${status}
  current_phase: code
  completed_activities:
    - preflight
    - plan
${extra}`;

const fileOf = (id: string) => path.join(ws, '.flow', 'runs', id, 'run.yaml');

/** Writes run.yaml as flow does (temp file renamed into place); `old`: mtime an hour ago. */
function writeRun(id: string, status: string, opts: { old?: boolean; extra?: string } = {}) {
  const file = fileOf(id);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(`${file}.tmp`, runYaml(id, status, opts.extra));
  fs.renameSync(`${file}.tmp`, file);
  if (opts.old !== false) fs.utimesSync(file, HOUR_AGO, HOUR_AGO);
}

/** Puts `.flow/runs`'s mtime an hour back, as for a listing that settled long ago. */
const settleListing = () => fs.utimesSync(path.join(ws, '.flow', 'runs'), HOUR_AGO, HOUR_AGO);

/** Records the run.yaml files opened and stat'ed (observed: the calls go through). */
function watchFiles(): { opened: () => string[]; statted: () => string[] } {
  const opened: string[] = [];
  const statted: string[] = [];
  const runOf = (p: fs.PathLike) => path.basename(path.dirname(String(p)));
  const realOpen = fs.openSync;
  vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
    if (String(p).endsWith('run.yaml')) opened.push(runOf(p));
    return (realOpen as (...a: unknown[]) => number)(p, ...rest);
  }) as typeof fs.openSync);
  const realLstat = fs.lstatSync;
  vi.spyOn(fs, 'lstatSync').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
    if (String(p).endsWith('run.yaml')) statted.push(runOf(p));
    return (realLstat as (...a: unknown[]) => unknown)(p, ...rest);
  }) as typeof fs.lstatSync);
  // Reading a file lstats it too (no symlinks): each run counts once.
  const runs = (list: string[]) => [...new Set(list.splice(0))].sort();
  return { opened: () => opened.splice(0).sort(), statted: () => runs(statted) };
}

const ids = (list: { session: string }[]) => list.map((s) => s.session);

describe('flow sessions with the status cache', () => {
  it('lists active and blocked runs; then, with the same folders, touches no finished run', async () => {
    for (let i = 0; i < 20; i++) writeRun(`done-${String(i).padStart(2, '0')}`, 'completed');
    writeRun('run-active', 'active');
    writeRun('run-blocked', 'blocked', { extra: '  blocked_reason: tests failed\n' });
    writeRun('run-cancelled', 'cancelled');
    settleListing();
    const files = watchFiles();

    const first = await findInterruptedSessions(ws, cache);
    expect(ids(first)).toEqual(['run-active', 'run-blocked']);
    expect(first[1]!.blockedReason).toBe('tests failed');
    expect(files.opened()).toHaveLength(23);

    files.statted();
    const second = await findInterruptedSessions(ws, cache);
    expect(second).toEqual(first);
    // Active and blocked runs are read for their summary; finished runs are not even stat'ed.
    expect(files.opened()).toEqual(['run-active', 'run-blocked']);
    expect(files.statted()).toEqual(['run-active', 'run-blocked']);

    // Without the cache every run.yaml is read, and the answer is the same.
    expect(await findInterruptedSessions(ws)).toEqual(first);
    expect(files.opened()).toHaveLength(23);
  });

  it('sees what flow writes: a new run, an active run blocking, then finishing', async () => {
    writeRun('r1', 'completed');
    writeRun('r2', 'active');
    settleListing();
    expect(ids(await flowSessions(ws, cache))).toEqual(['r2']);
    writeRun('r3', 'active'); // a new folder: the listing changed
    expect(ids(await flowSessions(ws, cache))).toEqual(['r2', 'r3']);
    settleListing();
    writeRun('r2', 'blocked', { extra: '  blocked_reason: verify failed\n' });
    const now = await flowSessions(ws, cache);
    expect(now.map((s) => `${s.session}:${s.state}`)).toEqual(['r2:blocked', 'r3:active']);
    writeRun('r2', 'completed');
    writeRun('r3', 'cancelled');
    expect(await flowSessions(ws, cache)).toEqual([]);
    // Settled now: with the same folders they are not read again.
    const files = watchFiles();
    expect(await flowSessions(ws, cache)).toEqual([]);
    expect(files.statted()).toEqual([]);
  });

  it('sees a hand edit of a finished run when the listing changes, or at once with rescan', async () => {
    writeRun('r1', 'completed');
    writeRun('r2', 'completed');
    settleListing();
    expect(await flowSessions(ws, cache)).toEqual([]);
    writeRun('r2', 'active'); // renamed into place by hand: r2's folder only
    expect(await flowSessions(ws, cache)).toEqual([]);
    expect(ids(await flowSessions(ws, cache, { rescan: true }))).toEqual(['r2']);
    // In place, same size, old mtime put back: ctime still moves.
    const file = fileOf('r1');
    const text = fs.readFileSync(file, 'utf8').replace('status: completed', 'status: blocked  ');
    expect(text.length).toBe(fs.statSync(file).size);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, text, 0);
    fs.closeSync(fd);
    fs.utimesSync(file, HOUR_AGO, HOUR_AGO);
    writeRun('r9', 'completed'); // the listing changes: every stamp is checked
    expect(ids(await flowSessions(ws, cache))).toEqual(['r1', 'r2']);
  });

  it('reads a run.yaml written within the last second again on every lookup', async () => {
    writeRun('young', 'completed', { old: false });
    writeRun('old', 'completed');
    settleListing();
    expect(await flowSessions(ws, cache)).toEqual([]);
    const files = watchFiles();
    expect(await flowSessions(ws, cache)).toEqual([]);
    expect(files.opened()).toEqual(['young']);
    // Once it is old, it settles.
    fs.utimesSync(fileOf('young'), HOUR_AGO, HOUR_AGO);
    expect(await flowSessions(ws, cache)).toEqual([]);
    files.opened();
    expect(await flowSessions(ws, cache)).toEqual([]);
    expect(files.opened()).toEqual([]);
  });

  it('forgets run folders that are gone, and keeps workspaces apart', async () => {
    writeRun('r1', 'completed');
    writeRun('r2', 'completed');
    await flowSessions(ws, cache);
    const other = path.join(root, 'other');
    fs.mkdirSync(path.join(other, '.flow', 'runs'), { recursive: true });
    expect(await flowSessions(other, cache)).toEqual([]);
    fs.rmSync(path.dirname(fileOf('r1')), { recursive: true });
    await flowSessions(ws, cache);
    expect([...(await cache.load(ws)).keys()]).toEqual(['r2']);
    expect((await cache.load(other)).size).toBe(0);
  });

  it('an unparseable run.yaml is skipped and read again on every lookup until it parses', async () => {
    writeRun('bad', 'completed');
    fs.writeFileSync(fileOf('bad'), 'state: [unclosed\n');
    fs.utimesSync(fileOf('bad'), HOUR_AGO, HOUR_AGO);
    settleListing();
    expect(await flowSessions(ws, cache)).toEqual([]);
    fs.writeFileSync(fileOf('bad'), runYaml('bad', 'active'));
    expect(ids(await flowSessions(ws, cache))).toEqual(['bad']);
  });

  it('a damaged cache row only costs a full read', async () => {
    writeRun('r1', 'blocked');
    settleListing();
    await flowSessions(ws, cache);
    db.sqlite.prepare(`UPDATE flow_run_cache SET open_json = '{', entries_json = 'x'`).run();
    expect(ids(await flowSessions(ws, cache))).toEqual(['r1']);
  });
});
