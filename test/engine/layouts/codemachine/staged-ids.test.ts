/**
 * template.json is staged while the ledger line is fsynced, with the registry.db ids its rows
 * will get; the rows are written only once the line is durable. A worker registering an agent
 * run in between (another connection to registry.db) takes an id first: the template written
 * must still name the row the registry really has, and no write lock may be held across the
 * fsync (the worker's insert would wait on it).
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { codemachinePaths } from '../../../../src/engine/layouts/codemachine/paths.ts';
import {
  RegistryDb,
  registerAgentRun,
} from '../../../../src/engine/layouts/codemachine/registry-db.ts';
import { waitUntil } from '../../../support/slowdown.ts';
import { RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

describe('codemachine ids staged during the ledger fsync', () => {
  let h: Harness;
  beforeEach(() => {
    h = makeHarness();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await h.dispose();
  });

  it('a row registered by another writer meanwhile: template.json names the id the registry has', async () => {
    await h.d.start({ selectedTrack: 'quick' });
    await h.d.started('plan');
    const ledger = fs.realpathSync(`${h.store.runDir(RUN_ID)}/ledger.jsonl`);
    // The ledger's fsync is held until the test lets it go.
    const fsync = fs.fsync;
    let letGo: (() => void) | null = null;
    vi.spyOn(fs, 'fsync').mockImplementation(((fd: number, cb: (e: unknown) => void) => {
      if (letGo === null && fs.readlinkSync(`/proc/self/fd/${fd}`) === ledger) {
        letGo = () => fsync(fd, cb);
        return;
      }
      fsync(fd, cb);
    }) as typeof fs.fsync);
    // Skipping review before it ran gives it a `skipped` row, whose id template.json names.
    const committing = h.d.send({ type: 'skip', stepId: 'review', ahead: true, reason: 'test' });
    await waitUntil(() => letGo !== null, { message: 'the ledger was never fsynced' });
    // A worker registers an agent run now: it must not wait for a lock, and takes the next id.
    const other = registerAgentRun(h.ws, {
      jobId: 'other-run:build:1',
      runId: 'other-run',
      stepId: 'build',
      kind: 'step',
      attempt: 1,
      name: 'builder',
      start: h.d.now(),
      prompt: 'build',
    });
    (letGo as unknown as () => void)();
    vi.restoreAllMocks();
    await committing;
    const db = RegistryDb.open(h.ws);
    let skipped: number | undefined;
    try {
      skipped = db.latestRowId(RUN_ID, 'review');
    } finally {
      db.close();
    }
    expect(skipped).toBeDefined();
    expect(skipped).not.toBe(other.monitoringId);
    const template = JSON.parse(fs.readFileSync(codemachinePaths(h.ws).template, 'utf8'));
    const review = h.d.run.steps.find((s) => s.id === 'review')!;
    expect(template.completedSteps[String(review.index)].monitoringId).toBe(skipped);
  });
});
