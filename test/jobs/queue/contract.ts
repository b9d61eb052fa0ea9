/**
 * The job queue contract, run against every driver (sqlite.test.ts, bullmq.test.ts). Each case
 * is a rule of the JobQueue port (src/jobs/queue/port.ts) that the engine relies on. What the
 * cases share is in contract-support.ts.
 */
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/errors.ts';
import { type JobQueue, type JobSpec, jobIdOf } from '../../../src/jobs/queue/port.ts';
import {
  collectOutcomes,
  collectSignals,
  logLines,
  type QueueHarness,
  sleep,
  step,
  TestContext,
  waitUntil,
} from './contract-support.ts';

export type { QueueHarness } from './contract-support.ts';

/** Defines the contract cases for one driver. */
export function defineQueueContract(
  driver: string,
  makeHarness: () => Promise<QueueHarness>,
): void {
  describe(`job queue contract: ${driver}`, () => {
    let ctx: TestContext;
    beforeEach(async () => {
      ctx = new TestContext(await makeHarness());
    });
    afterEach(async () => {
      await ctx.dispose();
    });

    it('enqueue is idempotent by runId:stepId:attempt and the job is processed once', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const job = step('idem', 'build', { n: 1 });
      expect(await queue.enqueue(job)).toEqual({ id: jobIdOf(job), created: true });
      expect(await queue.enqueue({ ...job, payload: { n: 2 } })).toEqual({
        id: jobIdOf(job),
        created: false,
      });
      const tracker = ctx.tracker(2);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 2 });
      expect(await seen.of(jobIdOf(job))).toEqual({
        ok: true,
        result: { echo: { n: 1 }, id: jobIdOf(job) },
      });
      expect(seen.specs.get(jobIdOf(job))).toEqual(job);
      // Still a no-op once finished; a later job of the same run proves nothing ran again.
      expect((await queue.enqueue(job)).created).toBe(false);
      const next = { ...job, attempt: 2 };
      expect((await queue.enqueue(next)).created).toBe(true);
      await seen.of(jobIdOf(next));
      expect(tracker.calls.get(jobIdOf(job))).toBe(1);
      expect(seen.counts.get(jobIdOf(job))).toBe(1);
      expect(await queue.get(jobIdOf(job))).toMatchObject({ state: 'completed', attempts: 1 });
    });

    it('runs at most `concurrency` jobs, never two of one run, and lets other runs pass a busy one', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(3);
      await queue.startWorker(tracker.processor, { concurrency: 3 });
      const [a1, a2, b1, c1, d1, e1] = [
        step('a', 's1'),
        step('a', 's2'),
        step('b', 's1'),
        step('c', 's1'),
        step('d', 's1'),
        step('e', 's1'),
      ].map((j) => ({ spec: j, id: jobIdOf(j) }));
      for (const j of [a1, a2, b1]) await queue.enqueue(j!.spec);
      await tracker.waitStarted(a1!.id);
      await tracker.waitStarted(b1!.id);
      // A slot is free but a2 must wait for a1; c1, enqueued later, takes the slot.
      await queue.enqueue(c1!.spec);
      await tracker.waitStarted(c1!.id);
      expect(tracker.started(a2!.id)).toBe(false);
      expect((await queue.get(a2!.id))?.state).toBe('waiting');
      await queue.enqueue(d1!.spec);
      await queue.enqueue(e1!.spec);
      tracker.release(a1!.id);
      await waitUntil(
        () => tracker.started(a2!.id) || tracker.started(d1!.id),
        'a slot to be reused',
      );
      tracker.releaseAll();
      for (const j of [a1, a2, b1, c1, d1, e1]) expect((await seen.of(j!.id)).ok).toBe(true);
      expect(tracker.violations).toEqual([]);
      expect(tracker.maxActive).toBe(3);
      expect(tracker.startedAt.get(a2!.id)).toBeGreaterThanOrEqual(tracker.startedAt.get(c1!.id)!);
    });

    it("runs a run's task jobs in parallel, but never two jobs of one task (its lane)", async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(4);
      await queue.startWorker(tracker.processor, { concurrency: 4 });
      const t1 = step('p', 'work+task+t1');
      const t2 = step('p', 'work+task+t2');
      const t1again = { ...t1, attempt: 2 };
      const other = step('q');
      for (const j of [t1, t2, t1again, other]) await queue.enqueue(j);
      await tracker.waitStarted(jobIdOf(t1));
      await tracker.waitStarted(jobIdOf(t2));
      await tracker.waitStarted(jobIdOf(other));
      // A slot is free and the later job got one, but t1's next attempt waits for the running one.
      expect(tracker.started(jobIdOf(t1again))).toBe(false);
      tracker.releaseAll();
      for (const j of [t1, t2, t1again, other]) expect((await seen.of(jobIdOf(j))).ok).toBe(true);
      expect(tracker.violations).toEqual([]);
      expect(tracker.startedAt.get(jobIdOf(t1again))).toBeGreaterThanOrEqual(
        tracker.startedAt.get(jobIdOf(other))!,
      );
    });

    it('honours delayMs: a delayed job waits while later undelayed jobs run', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(2);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 2 });
      const delayed = step('delayed');
      const prompt = step('prompt');
      const enqueuedAt = Date.now();
      await queue.enqueue(delayed, { delayMs: 500 });
      expect((await queue.get(jobIdOf(delayed)))?.state).toBe('waiting');
      await queue.enqueue(prompt);
      await seen.of(jobIdOf(prompt));
      await seen.of(jobIdOf(delayed));
      const startOf = (j: JobSpec) => tracker.startedAt.get(jobIdOf(j)) as number;
      expect(startOf(prompt)).toBeLessThan(startOf(delayed));
      // A lower bound is the behaviour itself, not a speed expectation.
      expect(startOf(delayed) - enqueuedAt).toBeGreaterThanOrEqual(495);
    });

    it('cancel removes a waiting job: never processed, no outcome, a re-enqueue is a no-op', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(1);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 1 });
      const doomed = step('cancel-waiting', 'review');
      const later = step('cancel-waiting', 'deploy');
      // The delays leave the cancel ample time on a loaded machine; `later` is due after `doomed`.
      await queue.enqueue(doomed, { delayMs: 500 });
      expect(await queue.cancel(jobIdOf(doomed))).toBe('removed');
      await queue.enqueue(later, { delayMs: 700 });
      await seen.of(jobIdOf(later));
      expect(tracker.started(jobIdOf(doomed))).toBe(false);
      expect(seen.outcomes.has(jobIdOf(doomed))).toBe(false);
      expect(await queue.get(jobIdOf(doomed))).toMatchObject({ state: 'cancelled' });
      expect((await queue.enqueue(doomed)).created).toBe(false);
      expect(await queue.cancel(jobIdOf(doomed))).toBe('not-found');
    });

    it("cancel from another queue instance aborts a running job's signal and reports cancelled", async () => {
      const queue = await ctx.open();
      const other = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(1);
      await queue.startWorker(tracker.processor, { concurrency: 1 });
      const job = step('cancel-running');
      await queue.enqueue(job);
      await tracker.waitStarted(jobIdOf(job));
      expect(await other.cancel(jobIdOf(job))).toBe('aborted');
      expect(await seen.of(jobIdOf(job))).toMatchObject({ ok: false, cancelled: true });
      expect(await queue.get(jobIdOf(job))).toMatchObject({ state: 'cancelled' });
      expect(await queue.cancel(jobIdOf(job))).toBe('not-found');
      expect(await queue.cancel('2026-11-29T143000Z-unknown:build:1')).toBe('not-found');
    });

    it('a queue opened later reports the outcomes finishing after it opened, not older ones', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(1);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 1 });
      const before = step('history', 'one');
      await queue.enqueue(before);
      await seen.of(jobIdOf(before));
      const observer = await ctx.open();
      const observed = collectOutcomes(observer);
      const after = step('history', 'two');
      await queue.enqueue(after);
      expect(await observed.of(jobIdOf(after))).toMatchObject({ ok: true });
      expect(observed.specs.get(jobIdOf(after))).toEqual(after);
      expect(observed.outcomes.has(jobIdOf(before))).toBe(false);
      // What finished earlier is still there to read after a restart.
      expect(await observer.get(jobIdOf(before))).toMatchObject({
        state: 'completed',
        outcome: { ok: true },
      });
    });

    it('a failing processor is reported with its message; get shows it', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const tracker = ctx.tracker(1);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 1 });
      const job = step('fails', 'build', { fail: 'agent exited with code 3' });
      await queue.enqueue(job);
      const outcome = await seen.of(jobIdOf(job));
      expect(outcome).toEqual({ ok: false, error: 'agent exited with code 3' });
      expect(await queue.get(jobIdOf(job))).toMatchObject({ state: 'failed', outcome });
      expect(await queue.get('2026-11-29T143000Z-none:build:1')).toBeNull();
    });

    // The supervisor applies what `get` shows of a job whose outcome event it missed: a read that
    // caught the job as it finished once showed a completed step with no result, a step failed
    // "the worker returned an unreadable result" (BullMQ: the job read before its state).
    it('get, read while jobs finish, never shows one finished without its outcome', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const jobs = Array.from({ length: 12 }, (_, i) =>
        step(`race-${i}`, 'build', i % 3 === 2 ? { fail: `exit ${i}` } : { n: i }),
      );
      for (const job of jobs) await queue.enqueue(job);
      const tracker = ctx.tracker(2);
      tracker.releaseAll();
      const torn: string[] = [];
      let reads = 0;
      let finished = 0;
      const poll = async (job: JobSpec): Promise<void> => {
        const id = jobIdOf(job);
        const expected = job.payload.fail
          ? { ok: false, error: job.payload.fail }
          : { ok: true, result: { echo: job.payload, id } };
        for (;;) {
          const status = await queue.get(id);
          reads++;
          if (status?.state !== 'completed' && status?.state !== 'failed') {
            // A macrotask turn: the sqlite driver's reads never leave the microtask queue.
            await new Promise((r) => setImmediate(r));
            continue;
          }
          if (JSON.stringify(status.outcome) !== JSON.stringify(expected))
            torn.push(`${id}: ${status.state} ${JSON.stringify(status.outcome)}`);
          finished++;
          return;
        }
      };
      const polls = jobs.map(poll);
      await queue.startWorker(tracker.processor, { concurrency: 2 });
      await Promise.all(polls);
      for (const job of jobs) await seen.of(jobIdOf(job));
      expect(torn).toEqual([]);
      expect(finished).toBe(jobs.length);
      expect(reads).toBeGreaterThan(jobs.length);
    });

    it('counts jobs by state (queue depth for /metrics)', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      await queue.enqueue(step('depth-a', 'build', {}));
      await queue.enqueue(step('depth-b', 'build', {}), { delayMs: 60_000 });
      expect(await queue.counts!()).toMatchObject({ waiting: 2 });
      const tracker = ctx.tracker(1);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 1 });
      await seen.of(jobIdOf(step('depth-a', 'build', {})));
      expect(await queue.counts!()).toMatchObject({ waiting: 1, completed: 1 });
    });

    it('lists jobs by state for the queue page and removes a waiting one, never a running one', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const ok = step('list-ok');
      const bad = step('list-bad', 'build', { fail: 'boom' });
      const held = step('list-held', 'build', { hold: true });
      const stuck = step('list-stuck');
      const later = step('list-later');
      const before = Date.now();
      for (const j of [ok, bad, held, stuck]) await queue.enqueue(j);
      await queue.enqueue(later, { delayMs: 60_000 });
      const ids = async (state: Parameters<JobQueue['listJobs']>[0]) =>
        (await queue.listJobs(state, 10)).map((j) => j.id);
      expect(await ids('waiting')).toEqual([ok, bad, held, stuck].map(jobIdOf));
      const [delayed] = await queue.listJobs('delayed', 10);
      expect(delayed).toMatchObject({ id: jobIdOf(later), runId: later.runId, stepId: 'build' });
      expect(delayed!.availableAt).toBeGreaterThanOrEqual(before + 60_000);
      expect(await queue.jobCounts()).toEqual({
        waiting: 4,
        active: 0,
        delayed: 1,
        failed: 0,
        completed: 0,
      });
      expect((await queue.listJobs('waiting', 2)).map((j) => j.id)).toEqual([ok, bad].map(jobIdOf));

      // A stuck job removed before it starts: it never runs, is listed nowhere, stays done.
      expect(await queue.removeJob(jobIdOf(stuck))).toBe('removed');
      expect(await queue.removeJob('2026-11-29T143000Z-none:build:1')).toBe('not-found');
      expect(await ids('waiting')).toEqual([ok, bad, held].map(jobIdOf));
      expect((await queue.get(jobIdOf(stuck)))?.state).toBe('cancelled');
      expect((await queue.enqueue(stuck)).created).toBe(false);

      const tracker = ctx.tracker(3);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 3 });
      await seen.of(jobIdOf(ok));
      await seen.of(jobIdOf(bad));
      await tracker.waitStarted(jobIdOf(held));
      expect(await ids('active')).toEqual([jobIdOf(held)]);
      expect(await queue.removeJob(jobIdOf(held))).toBe('active');
      const [failed] = await queue.listJobs('failed', 10);
      expect(failed).toMatchObject({
        id: jobIdOf(bad),
        state: 'failed',
        error: 'boom',
        attempts: 1,
      });
      expect(failed!.finishedAt).toBeGreaterThanOrEqual(before);
      expect(await ids('completed')).toEqual([jobIdOf(ok)]);
      expect(await queue.jobCounts()).toEqual({
        waiting: 0,
        active: 1,
        delayed: 1,
        failed: 1,
        completed: 1,
      });
      tracker.release(jobIdOf(held));
      expect((await seen.of(jobIdOf(held))).ok).toBe(true);
      expect(tracker.calls.has(jobIdOf(stuck))).toBe(false);
    });

    it('refuses specs whose ids would be ambiguous', async () => {
      const queue = await ctx.open();
      const bad = { ...step('x'), stepId: 'a:b' };
      const error = await queue.enqueue(bad).catch((err: unknown) => err);
      expect(hasCode(error, 'INVALID_INPUT')).toBe(true);
    });

    it('a worker process SIGKILLed mid-job: another worker process finishes it, its side effect happens once, the outcome reaches the enqueuer', async () => {
      const queue = await ctx.open();
      const seen = collectOutcomes(queue);
      const log = join(ctx.dir, 'side-effects.log');
      writeFileSync(log, '');
      // The survivor boots meanwhile (process start-up is slow) but starts its worker on a signal.
      const go = join(ctx.dir, 'go');
      const survivorStarting = ctx.spawnWorker('complete', log, { startWhen: go });
      survivorStarting.catch(() => {}); // awaited below; this only marks it handled meanwhile
      const crashing = await ctx.spawnWorker('hang', log);
      const job = step('crash');
      const id = jobIdOf(job);
      await queue.enqueue(job);
      await waitUntil(() => logLines(log).length === 1, 'the first worker to start the job');
      writeFileSync(go, '');
      const survivor = await survivorStarting;
      // While the first worker lives (and renews its claim), nobody else may take the job.
      await sleep(ctx.harness.leaseWaitMs);
      crashing.kill('SIGKILL');
      appendFileSync(log, 'killed\n');
      const outcome = await seen.of(id);
      expect(outcome).toEqual({ ok: true, result: { pid: survivor.pid } });
      expect(logLines(log)).toEqual([
        `start ${id} ${crashing.pid}`,
        'killed',
        `start ${id} ${survivor.pid}`,
        `done ${id} ${survivor.pid}`,
      ]);
      expect(await queue.get(id)).toMatchObject({ state: 'completed', attempts: 2 });
    });

    it('started and progress signals of a job run in this process reach listeners before its outcome', async () => {
      const queue = await ctx.open();
      const seen = collectSignals(queue);
      await queue.startWorker(
        async (job, _signal, report) => {
          report({ n: 1 });
          report({ n: 2 });
          return { id: job.id };
        },
        { concurrency: 1 },
      );
      const job = step('signals-local', 'build', { x: 1 });
      const id = jobIdOf(job);
      await queue.enqueue(job);
      await waitUntil(() => seen.events.some((e) => e.startsWith('outcome')), 'the outcome');
      expect(seen.events).toEqual([
        `started ${id}`,
        `progress ${id} {"n":1}`,
        `progress ${id} {"n":2}`,
        `outcome ${id} true`,
      ]);
      expect(seen.specs).toEqual([job]);
    });

    it('started and progress signals of a job run by another process reach listeners', async () => {
      const queue = await ctx.open();
      const seen = collectSignals(queue);
      const log = join(ctx.dir, 'side-effects.log');
      writeFileSync(log, '');
      await ctx.spawnWorker('report', log);
      const job = step('signals-remote');
      const id = jobIdOf(job);
      await queue.enqueue(job);
      await waitUntil(() => seen.events.some((e) => e.startsWith('outcome')), 'the outcome');
      expect(seen.events).toEqual([
        `started ${id}`,
        `progress ${id} {"n":1}`,
        `progress ${id} {"n":2}`,
        `outcome ${id} true`,
      ]);
      expect(seen.specs).toEqual([job]);
    });

    it('a job whose workers keep dying fails with lost: true after the bounded retries', async () => {
      const queue = await ctx.open({ maxLostRetries: 0 });
      const seen = collectOutcomes(queue);
      const log = join(ctx.dir, 'side-effects.log');
      writeFileSync(log, '');
      const crashing = await ctx.spawnWorker('hang', log, { maxLostRetries: 0 });
      const job = step('lost');
      await queue.enqueue(job);
      await waitUntil(() => logLines(log).length === 1, 'the worker to start the job');
      crashing.kill('SIGKILL');
      const tracker = ctx.tracker(1);
      tracker.releaseAll();
      await queue.startWorker(tracker.processor, { concurrency: 1 });
      expect(await seen.of(jobIdOf(job))).toMatchObject({ ok: false, lost: true });
      expect(tracker.calls.size).toBe(0);
      expect(await queue.get(jobIdOf(job))).toMatchObject({ state: 'failed' });
    });
  });
}
