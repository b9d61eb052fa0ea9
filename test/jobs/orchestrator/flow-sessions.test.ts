/**
 * Interrupted flow runs found through bridge.db's status cache (issue 14: start-up offers and
 * `phasebridge sessions` must not cost a parse of every finished run): a finished run whose
 * run.yaml did not change is not opened again, while a run.yaml that another tool changed (flow
 * renaming a temp file into place, an in-place edit of the same size, even one that puts the old
 * mtime back) is read again and offered. Real files, a real bridge.db file.
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

/** Counts the run.yaml files opened (observed, calls go through). */
function watchOpens(): () => string[] {
  const opened: string[] = [];
  const real = fs.openSync;
  vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
    if (String(p).endsWith('run.yaml')) opened.push(path.basename(path.dirname(String(p))));
    return (real as (...a: unknown[]) => number)(p, ...rest);
  }) as typeof fs.openSync);
  return () => opened.splice(0);
}

const ids = (list: { session: string }[]) => list.map((s) => s.session);

describe('flow sessions with the status cache', () => {
  it('lists active and blocked runs; a second look opens only those, not the finished ones', async () => {
    for (let i = 0; i < 20; i++) writeRun(`done-${String(i).padStart(2, '0')}`, 'completed');
    writeRun('run-active', 'active');
    writeRun('run-blocked', 'blocked', { extra: '  blocked_reason: tests failed\n' });
    writeRun('run-cancelled', 'cancelled');
    const opened = watchOpens();

    const first = await findInterruptedSessions(ws, cache);
    expect(ids(first)).toEqual(['run-active', 'run-blocked']);
    expect(first[1]!.blockedReason).toBe('tests failed');
    expect(opened()).toHaveLength(23);

    const second = await findInterruptedSessions(ws, cache);
    expect(second).toEqual(first);
    // Active and blocked runs are read for their summary; unchanged finished runs are not.
    expect(opened().sort()).toEqual(['run-active', 'run-blocked']);

    // Without the cache every run.yaml is read, and the answer is the same.
    expect(await findInterruptedSessions(ws)).toEqual(first);
    expect(opened()).toHaveLength(23);
  });

  it('sees a finished run that flow itself made active again (temp file renamed into place)', async () => {
    writeRun('r1', 'completed');
    writeRun('r2', 'completed');
    expect(await flowSessions(ws, cache)).toEqual([]);
    writeRun('r2', 'active');
    expect(ids(await flowSessions(ws, cache))).toEqual(['r2']);
    // And back: finished again, no longer offered.
    writeRun('r2', 'cancelled');
    expect(await flowSessions(ws, cache)).toEqual([]);
  });

  it('sees an in-place edit of the same size, even when the old mtime is put back', async () => {
    writeRun('r1', 'completed');
    expect(await flowSessions(ws, cache)).toEqual([]);
    const file = fileOf('r1');
    const text = fs.readFileSync(file, 'utf8').replace('status: completed', 'status: blocked  ');
    expect(text.length).toBe(fs.statSync(file).size);
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, text, 0);
    fs.closeSync(fd);
    fs.utimesSync(file, HOUR_AGO, HOUR_AGO); // ctime still moves
    expect(ids(await flowSessions(ws, cache))).toEqual(['r1']);
  });

  it('does not trust a run.yaml written within the last second (read again next time)', async () => {
    writeRun('young', 'completed', { old: false });
    writeRun('old', 'completed');
    expect(await flowSessions(ws, cache)).toEqual([]);
    expect([...(await cache.load(ws)).keys()]).toEqual(['old']);
    const opened = watchOpens();
    expect(await flowSessions(ws, cache)).toEqual([]);
    expect(opened()).toEqual(['young']);
  });

  it('forgets run folders that are gone, and keeps workspaces apart', async () => {
    writeRun('r1', 'completed');
    writeRun('r2', 'completed');
    await flowSessions(ws, cache);
    const other = path.join(root, 'other');
    fs.mkdirSync(other);
    expect(await flowSessions(other, cache)).toEqual([]);
    fs.rmSync(path.dirname(fileOf('r1')), { recursive: true });
    await flowSessions(ws, cache);
    expect([...(await cache.load(ws)).keys()]).toEqual(['r2']);
    expect((await cache.load(other)).size).toBe(0);
  });

  it('an unparseable run.yaml is skipped, and read again once it changes', async () => {
    writeRun('bad', 'completed');
    fs.writeFileSync(fileOf('bad'), 'state: [unclosed\n');
    fs.utimesSync(fileOf('bad'), HOUR_AGO, HOUR_AGO);
    expect(await flowSessions(ws, cache)).toEqual([]);
    writeRun('bad', 'active');
    expect(ids(await flowSessions(ws, cache))).toEqual(['bad']);
  });
});
