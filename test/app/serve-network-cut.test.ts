/**
 * A leader whose network to Redis is cut (issue 33), as an operator meets it: two real `serve`
 * on one postgres and one redis-server, the leader's Redis reached through a TCP proxy. A run
 * reaches its plan checkpoint; the proxy then drops every packet (a black hole: no error, no
 * reset, replies never come) and Approve is pressed at once. The old leader, still polling
 * Telegram and still writing Postgres, takes the press and commits it, but the enqueue of the
 * next step goes into the silence. The standby takes the lease; the step the ledger queued gets
 * its job (once, the same attempt), the run reaches its review checkpoint, the press is
 * answered, the decision is in the ledger once, and the old leader exits 75. A leader cut off
 * while its agent works takes that agent down with it when it exits 75: a detached agent left
 * running would work on beside the worker that takes the step again.
 */
import fs from 'node:fs';
import { expect, it } from 'vitest';
import {
  ALICE,
  expectAppliedOnce,
  expectStepRunOnce,
  haCluster,
  TEAM,
} from '../support/ha-cluster.ts';
import { roleOf } from '../support/ha-serve.ts';
import { describeHa, redisBehindProxy } from '../support/ha-suite.ts';
import { processAlive } from '../support/process-alive.ts';
import { slow, waitUntil } from '../support/slowdown.ts';

/** Pids of the demo agents whose parent is `ppid` (read from /proc). */
function demoAgentsOf(ppid: number): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (parent === ppid && cmd.includes('demo-agent')) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

describeHa('serve network cut: the leader loses Redis silently', 'network-cut story', (suite) => {
  it(
    'black-holed Redis: the standby takes over, the pressed Approve is applied once and answered, the run reaches review',
    async () => {
      const { ws, leaderAndStandby, cutAtPlanAndApprove } = await haCluster(suite);
      const { proxy, url: viaProxy } = await redisBehindProxy(suite);
      const { a, b } = await leaderAndStandby({ REDIS_URL: viaProxy });

      // Packets to and from Redis are dropped; the leader is told nothing.
      const { summary } = await cutAtPlanAndApprove(a, b, proxy);
      expect(a.output()).toContain('no longer the leader');
      console.log(`network-cut story: ${summary}`);

      // The decision once, and the step after it queued once and run once: no attempt 2.
      expectAppliedOnce(ws);
      expectStepRunOnce(ws, 'build');
      expect(await roleOf(b)).toBe('leader');
    },
    slow(300_000),
  );

  it(
    'a leader cut off while its agent works: when it exits 75 the agent is gone too, not left running beside the retake',
    async () => {
      const { fake, leaderAndStandby } = await haCluster(suite);
      const { proxy, url: viaProxy } = await redisBehindProxy(suite);
      const { a } = await leaderAndStandby({
        REDIS_URL: viaProxy,
        DEMO_AGENT_BEHAVIOUR: 'hang',
      });
      fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
      const [agent] = await waitUntil(
        () => {
          const pids = demoAgentsOf(a.child.pid!);
          return pids.length > 0 ? pids : undefined;
        },
        { timeoutMs: 60_000, message: `no agent started:\n${a.output()}` },
      );

      // A failing run must not leave a hanging agent behind.
      suite.cleanups.push(() => {
        if (processAlive(agent!)) process.kill(-agent!, 'SIGKILL');
      });
      proxy.cut('blackhole');
      const code = await Promise.race([
        a.exited,
        new Promise<'running'>((r) => setTimeout(() => r('running'), slow(60_000))),
      ]);
      expect(code, a.output()).toBe(75);
      await waitUntil(() => !processAlive(agent!), {
        timeoutMs: 5_000,
        message: `the agent ${agent} of the old leader still runs after its exit`,
      });
    },
    slow(300_000),
  );
});
