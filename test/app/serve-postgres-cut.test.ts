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
import { expect, it } from 'vitest';
import { expectAppliedOnce, expectStepRunOnce, haCluster } from '../support/ha-cluster.ts';
import { roleOf } from '../support/ha-serve.ts';
import { behindProxy, describeHa } from '../support/ha-suite.ts';
import { slow } from '../support/slowdown.ts';

describeHa(
  'serve Postgres cut: the leader loses bridge.db silently',
  'postgres-cut story',
  (suite) => {
    it(
      'black-holed Postgres: the leader lets its lease go, the standby leads, the pressed Approve is applied once and the run reaches review',
      async () => {
        const { ws, url, leaderAndStandby, cutAtPlanAndApprove } = await haCluster(suite);
        const { proxy, url: viaProxy } = await behindProxy(suite, url);
        // A job a worker took and then lost is taken again only after its lease: ten minutes
        // here, so a step the old leader's worker took after the cut would stall the story.
        const jobLease = { PHASEBRIDGE_JOB_LEASE_MS: '600000' };
        const { a, b } = await leaderAndStandby({ DATABASE_URL: viaProxy, ...jobLease });

        // Packets to and from Postgres are dropped; the leader's Redis still answers.
        const { summary } = await cutAtPlanAndApprove(a, b, proxy);
        expect(a.output()).toContain('bridge.db did not answer');
        console.log(`postgres-cut story: ${summary}`);

        // The decision once; the step after it queued once and run once, by the new leader's
        // worker: the old one took no job once its lease went stale.
        expectAppliedOnce(ws);
        expectStepRunOnce(ws, 'build');
        expect(await roleOf(b)).toBe('leader');
      },
      slow(300_000),
    );
  },
);
