/**
 * A step on a separate `phasebridge worker` across a takeover (issue 33), as an operator meets
 * it: two `serve --concurrency 0` (they run no steps themselves) on one postgres and one
 * redis-server, one worker process, the fake Telegram. The plan is approved; the worker takes
 * the build step and its agent waits; the leader is SIGKILLed and only then the agent finishes,
 * so the step's result reaches the queue while no bridge leads (the leader held a 15 s lease).
 * A second `serve` started then takes over, applies that result once (build's attempt 1 started
 * and finished once, on the worker: nothing ran it again) and the run reaches its review checkpoint.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';
import { stepLogPath } from '../../src/jobs/orchestrator/run-files.ts';
import { ALICE, expectAppliedOnce, haCluster, TEAM } from '../support/ha-cluster.ts';
import { describeHa } from '../support/ha-suite.ts';
import { slow, waitUntil } from '../support/slowdown.ts';
import { startWorkerProcess, workerPidOfLog } from '../support/worker-processes.ts';

/** Events of the one run in `ws` so far (a line still being written is left for later). */
function eventsOf(ws: string): { type: string; stepId?: string; attempt?: number }[] {
  const runsDir = path.join(ws, '.phasebridge', 'runs');
  const runs = fs.existsSync(runsDir) ? fs.readdirSync(runsDir) : [];
  if (runs.length !== 1) return [];
  const file = path.join(runsDir, runs[0]!, 'ledger.jsonl');
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return (JSON.parse(line) as { events: { type: string }[] }).events;
      } catch {
        return [];
      }
    });
}

describeHa(
  'serve failover: the step runs on a separate worker',
  'failover-with-a-worker story',
  (suite) => {
    it(
      'a step that ends on the worker while nobody leads is applied once by the new leader; the run reaches review',
      async () => {
        const { dir, ws, fake, start, roleIs, reachesPlan, reachesReview, press } =
          await haCluster(suite);
        // The agents wait while this file is missing: there at first, so the plan runs through.
        const hold = path.join(dir, 'agents-may-finish');
        fs.writeFileSync(hold, '');
        const worker = await startWorkerProcess({
          home: path.join(dir, 'worker-home'),
          redisUrl: suite.redis.url,
          concurrency: 1,
          env: { DEMO_AGENT_BEHAVIOUR: `sleep=20 waitfor=${hold}` },
        });
        suite.cleanups.push(() => worker.stop());
        // The leader alone: its successor starts once the build's result is in. A standby
        // running meanwhile led before it under load (the agent's end took longer than the
        // lease), so "nobody leads while the step ends" held only on a quiet machine.
        const a = await start('a', { PHASEBRIDGE_LEADER_LEASE_MS: '15000' }, [
          '--concurrency',
          '0',
        ]);
        await roleIs(a, 'leader');

        fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
        const plan = await reachesPlan(a);
        fs.rmSync(hold);
        const pressId = press(plan.message_id, 'Approve');
        await waitUntil(
          () => eventsOf(ws).some((e) => e.type === 'stepStarted' && e.stepId === 'build'),
          { timeoutMs: 60_000, message: `build never started on the worker:\n${worker.output()}` },
        );

        // The press's answer goes out beside the build's start, not before it: waited for, so
        // the kill below finds it answered (the subject here is the step's result).
        await waitUntil(() => fake.callbackAnswers.has(pressId), {
          timeoutMs: 30_000,
          message: `the press was never answered:\n${a.output()}`,
        });
        // The leader dies while the worker holds the build job; then the agent finishes.
        a.child.kill('SIGKILL');
        await a.exited;
        fs.writeFileSync(hold, '');
        const runId = fs.readdirSync(path.join(ws, '.phasebridge', 'runs'))[0]!;
        const log = stepLogPath(ws, runId, 'build', 1);
        await waitUntil(
          () => fs.existsSync(log) && /"type":"result"/.test(fs.readFileSync(log, 'utf8')),
          {
            timeoutMs: 30_000,
            message: `the build agent never finished:\n${worker.output()}`,
          },
        );
        // Its result is in the queue while nobody leads; then a new bridge starts and leads.
        const b = await start('b', {}, ['--concurrency', '0']);
        await roleIs(b, 'leader');
        await reachesReview(b);
        expectAppliedOnce(ws);
        const build = eventsOf(ws).filter((e) => e.stepId === 'build');
        expect(build.filter((e) => e.type === 'stepStarted').map((e) => e.attempt)).toEqual([1]);
        expect(build.filter((e) => e.type === 'stepCompleted').map((e) => e.attempt)).toEqual([1]);
        // The worker process ran it, once: one agent in the attempt's log.
        const text = fs.readFileSync(log, 'utf8');
        expect(workerPidOfLog(text)).toBe(worker.pid);
        expect(text.match(/demo-agent: pid \d+, worker pid/g)).toHaveLength(1);
      },
      slow(300_000),
    );
  },
);
