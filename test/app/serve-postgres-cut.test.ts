/**
 * A leader whose network to Postgres is cut (issue 33), as an operator meets it: two real `serve`
 * on one postgres and one redis-server, the leader's bridge.db reached through a TCP proxy. A run
 * reaches its plan checkpoint; the proxy then drops every packet (no error, no reset, replies
 * never come) and Approve is pressed at once. The old leader still holds its lease in Redis, but
 * it renews it only while bridge.db answers: it lets the lease go, declines what it had in hand
 * and exits 75; its worker takes no job once its lease goes stale. The standby, which reaches
 * Postgres, leads; the press is applied once and answered, and the run reaches its review
 * checkpoint, its next step run once by the new leader's worker.
 */
import os from 'node:os';
import { expect, it } from 'vitest';
import { ALICE, expectAppliedOnce, haCluster, ledgerLinesOf, TEAM } from '../support/ha-cluster.ts';
import { roleOf } from '../support/ha-serve.ts';
import { behindProxy, describeHa } from '../support/ha-suite.ts';
import { slow, waitUntil } from '../support/slowdown.ts';

describeHa(
  'serve Postgres cut: the leader loses bridge.db silently',
  'postgres-cut story',
  (suite) => {
    it(
      'black-holed Postgres: the leader lets its lease go, the standby leads, the pressed Approve is applied once and the run reaches review',
      async () => {
        const { ws, url, fake, roleIs, leaderAndStandby, reachesPlan, reachesReview, press } =
          await haCluster(suite);
        const { proxy, url: viaProxy } = await behindProxy(suite, url);
        // A job a worker took and then lost is taken again only after its lease: ten minutes
        // here, so a step the old leader's worker took after the cut would stall the story.
        const jobLease = { PHASEBRIDGE_JOB_LEASE_MS: '600000' };
        const { a, b } = await leaderAndStandby({ DATABASE_URL: viaProxy, ...jobLease });

        fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
        const plan = await reachesPlan(a);

        // Packets to and from Postgres are dropped from now on; the leader's Redis still answers.
        proxy.cut('blackhole');
        const cutAt = Date.now();
        const exitedAt = a.exited.then(() => Date.now());
        const pressId = press(plan.message_id, 'Approve');

        await roleIs(b, 'leader');
        const takeoverMs = Date.now() - cutAt;
        await waitUntil(() => fake.callbackAnswers.has(pressId), {
          timeoutMs: 60_000,
          message: `the press was never answered:\n${a.output()}\n---\n${b.output()}`,
        });
        await reachesReview(b);
        const reviewMs = Date.now() - cutAt;

        const code = await Promise.race([
          a.exited,
          new Promise<'running'>((r) => setTimeout(() => r('running'), slow(60_000))),
        ]);
        expect(code, a.output()).toBe(75);
        expect(a.output()).toContain('bridge.db did not answer');
        const exitMs = (await exitedAt) - cutAt;
        console.log(
          `postgres-cut story: the standby led ${takeoverMs} ms after the cut, the run was at review after ${reviewMs} ms, the old leader exited 75 after ${exitMs} ms (load ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')})`,
        );

        // The decision once; the step after it queued once and run once, by the new leader's
        // worker: the old one took no job once its lease went stale.
        expectAppliedOnce(ws);
        const events = ledgerLinesOf(ws).flatMap((l) => l.events);
        expect(events.filter((e) => e.type === 'stepInterrupted')).toEqual([]);
        const build = events.filter((e) => e.stepId === 'build');
        expect(build.filter((e) => e.type === 'stepQueued')).toHaveLength(1);
        expect(build.filter((e) => e.type === 'stepCompleted')).toEqual([
          expect.objectContaining({ attempt: 1 }),
        ]);
        expect(await roleOf(b)).toBe('leader');
      },
      slow(300_000),
    );
  },
);
