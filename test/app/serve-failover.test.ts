/**
 * One leader, a hot standby (issue 33), as an operator meets it: two real `phasebridge serve`
 * processes on one postgres and one redis-server, the fake Telegram, one shared workspace folder.
 * The first leads (it polls Telegram), the second answers /readyz and /metrics as a standby,
 * which says it has prepared the takeover (bridge.db, the job queue, the modules opened). A
 * run reaches its plan checkpoint; the leader is SIGKILLed and Approve is pressed at once: the
 * standby takes the lease, starts polling, answers the press and applies it once (the run moves
 * on to review), and no update is applied twice (one run, each ledger key once). A leader paused
 * (SIGSTOP) past its lease wakes after the takeover, finds the lease gone and exits 75. A leader
 * killed while the platform holds its checkpoint send unanswered leaves that send `attempted`:
 * the new leader sends it again, a press on the first copy counts, and no copy keeps buttons.
 */
import { expect, it } from 'vitest';
import { ALICE, expectAppliedOnce, haCluster, metricsOf, TEAM } from '../support/ha-cluster.ts';
import { roleOf } from '../support/ha-serve.ts';
import { describeHa } from '../support/ha-suite.ts';
import { slow, waitUntil } from '../support/slowdown.ts';

describeHa('serve failover: one leader, a hot standby', 'failover story', (suite) => {
  const cluster = () => haCluster(suite);

  it(
    'the standby takes over a SIGKILLed leader; a press sent meanwhile is answered and applied once',
    async () => {
      const { ws, fake, roleIs, leaderAndStandby, reachesReview } = await cluster();
      const { a, b } = await leaderAndStandby();
      // The standby says who leads, and its metrics say what it is.
      const standbyReady = (await (await fetch(`${b.url}/readyz`)).json()) as {
        checks: { name: string; detail?: string }[];
      };
      expect(standbyReady.checks.find((c) => c.name === 'leader')?.detail).toMatch(
        /^standby: the leader is /,
      );
      // Hot: before any takeover, the standby has bridge.db, the job queue and the modules ready.
      await waitUntil(
        async () => {
          const ready = (await (await fetch(`${b.url}/readyz`)).json()) as typeof standbyReady;
          return ready.checks.find((c) => c.name === 'takeover')?.detail?.startsWith('prepared:');
        },
        { timeoutMs: 60_000, message: `the standby did not prepare:\n${b.output()}` },
      );
      expect((await fetch(`${b.url}/readyz?role=leader`)).status).toBe(503);
      const standbyMetrics = await metricsOf(b);
      expect(standbyMetrics).toContain(
        'phasebridge_bridge_info{role="standby",database="postgres",queue="bullmq"} 1',
      );
      expect(standbyMetrics).toMatch(/^phasebridge_leader_lease_age_seconds \d/m);

      fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
      const plan = await waitUntil(
        () =>
          fake
            .botMessages(TEAM.id)
            .find(
              (m) =>
                /Checkpoint plan/.test(m.text ?? '') &&
                JSON.stringify(m.replyMarkup ?? {}).includes('Approve'),
            ),
        { timeoutMs: 60_000, message: `no plan checkpoint in the chat:\n${a.output()}` },
      );

      // The leader dies; Approve is pressed before anyone polls Telegram again.
      a.child.kill('SIGKILL');
      const killedAt = Date.now();
      await a.exited;
      const press = fake.userPresses({
        chatId: TEAM.id,
        messageId: plan.message_id,
        from: ALICE,
        label: 'Approve',
      });
      await roleIs(b, 'leader');
      const takeoverMs = Date.now() - killedAt;
      console.log(`failover story: the standby led ${takeoverMs} ms after the SIGKILL`);

      const pressId = (press as { callback_query?: { id: string } }).callback_query!.id;
      await waitUntil(() => fake.callbackAnswers.has(pressId), {
        timeoutMs: 60_000,
        message: `the press was never answered:\n${b.output()}`,
      });
      await reachesReview(b);

      expectAppliedOnce(ws);

      const leaderMetrics = await metricsOf(b);
      expect(leaderMetrics).toContain(
        'phasebridge_bridge_info{role="leader",database="postgres",queue="bullmq"} 1',
      );
      expect(leaderMetrics).toMatch(/^phasebridge_leader_lease_age_seconds \d/m);
    },
    slow(300_000),
  );

  it(
    'a leader killed after the platform took its checkpoint send, before the answer: the press on the copy the chat shows is applied once',
    async () => {
      const { ws, fake, roleIs, leaderAndStandby, reachesReview } = await cluster();
      const { a, b } = await leaderAndStandby();
      // The checkpoint's message reaches the chat, but its answer never reaches the leader.
      const held = fake.answerLater('sendMessage', (p) => /Checkpoint plan/.test(String(p.text)));
      fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
      await held.arrived;
      a.child.kill('SIGKILL');
      await a.exited;
      held.release();
      const plan = fake.botMessages(TEAM.id).find((m) => /Checkpoint plan/.test(m.text ?? ''))!;
      // Pressed before the standby leads: it finds the press waiting when it starts polling.
      const press = fake.userPresses({
        chatId: TEAM.id,
        messageId: plan.message_id,
        from: ALICE,
        label: 'Approve',
      });
      await roleIs(b, 'leader');
      const pressId = (press as { callback_query?: { id: string } }).callback_query!.id;
      await waitUntil(() => fake.callbackAnswers.has(pressId), {
        timeoutMs: 60_000,
        message: `the press was never answered:\n${b.output()}`,
      });
      expect(
        JSON.stringify(fake.callbackAnswers.get(pressId)),
        `${JSON.stringify(fake.calls.slice(-20))}\n${b.output()}`,
      ).not.toMatch(/not valid/);
      await reachesReview(b);
      // No copy of the decided checkpoint keeps a live button.
      await waitUntil(
        () =>
          fake
            .botMessages(TEAM.id)
            .filter((m) => /Checkpoint plan/.test(m.text ?? ''))
            .every((m) => !JSON.stringify(m.replyMarkup ?? {}).includes('Approve')),
        {
          timeoutMs: 30_000,
          message: `a copy of the decided checkpoint still has buttons:\n${JSON.stringify(fake.botMessages(TEAM.id))}\n${JSON.stringify(fake.calls.slice(-30))}\n${b.output()}`,
        },
      );
      expectAppliedOnce(ws);
    },
    slow(300_000),
  );

  it(
    'a leader paused past its lease wakes to find another leading: it stops (exit 75), applying nothing',
    async () => {
      const { ws, fake, roleIs, leaderAndStandby, reachesReview } = await cluster();
      const { a, b } = await leaderAndStandby();
      fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
      const plan = await waitUntil(
        () =>
          fake
            .botMessages(TEAM.id)
            .find(
              (m) =>
                /Checkpoint plan/.test(m.text ?? '') &&
                JSON.stringify(m.replyMarkup ?? {}).includes('Approve'),
            ),
        { timeoutMs: 60_000, message: `no plan checkpoint in the chat:\n${a.output()}` },
      );

      // A stop-the-world pause (SIGSTOP: a long GC, a frozen VM) longer than the lease.
      a.child.kill('SIGSTOP');
      await roleIs(b, 'leader');
      fake.userPresses({
        chatId: TEAM.id,
        messageId: plan.message_id,
        from: ALICE,
        label: 'Approve',
      });
      await reachesReview(b);

      // The old leader wakes: it finds the lease gone, stops leading and exits for a restart.
      a.child.kill('SIGCONT');
      const code = await Promise.race([
        a.exited,
        new Promise<'running'>((r) => setTimeout(() => r('running'), slow(60_000))),
      ]);
      expect(code, a.output()).toBe(75);
      expect(a.output()).toContain('no longer the leader');

      expectAppliedOnce(ws);
      // The new leader still leads.
      expect(await roleOf(b)).toBe('leader');
    },
    slow(300_000),
  );
});
