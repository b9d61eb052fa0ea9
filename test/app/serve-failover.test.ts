/**
 * One leader, a hot standby (issue 33), as an operator meets it: two real `phasebridge serve`
 * processes on one postgres and one redis-server, the fake Telegram, one shared workspace folder.
 * The first leads (it polls Telegram), the second answers /readyz and /metrics as a standby,
 * which says it has prepared the takeover (bridge.db, the job queue, the modules opened). A
 * run reaches its plan checkpoint; the leader is SIGKILLed and Approve is pressed at once: the
 * standby takes the lease, starts polling, answers the press and applies it once (the run moves
 * on to review), and no update is applied twice (one run, each ledger key once). A machine stop
 * (the leader SIGSTOPped and its database, Redis and Telegram connections black-holed: no packet,
 * no FIN) is taken over the same way; when the machine comes back the old leader finds the lease
 * gone and exits 75. A leader killed while the platform holds its checkpoint send unanswered
 * leaves that send `attempted`: the new leader sends it again, a press on the first copy counts,
 * and no copy keeps buttons.
 */
import { expect, it } from 'vitest';
import {
  ALICE,
  expectAppliedOnce,
  haCluster,
  metricsOf,
  TEAM,
  takeoverPrepared,
} from '../support/ha-cluster.ts';
import { roleOf } from '../support/ha-serve.ts';
import { behindProxy, describeHa, redisBehindProxy } from '../support/ha-suite.ts';
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
      await takeoverPrepared(b);
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
    'a machine stop: the leader frozen, its network silent; the standby leads, a press is applied once; back, the old leader exits 75 applying nothing',
    async () => {
      const { url, ws, fake, roleIs, leaderAndStandby, reachesPlan, reachesReview, press } =
        await cluster();
      // Everything the leader reaches goes through a proxy: its database, its Redis, Telegram.
      const db = await behindProxy(suite, url);
      const redis = await redisBehindProxy(suite);
      const telegram = await behindProxy(suite, fake.apiRoot);
      const { a, b } = await leaderAndStandby({
        DATABASE_URL: db.url,
        REDIS_URL: redis.url,
        TELEGRAM_API_ROOT: telegram.url.replace(/\/$/, ''),
      });
      await takeoverPrepared(b);
      fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
      const plan = await reachesPlan(a);

      // Each proxy carries the leader's connections: the cut is felt on all three.
      for (const { proxy } of [db, redis, telegram]) expect(proxy.connections).toBeGreaterThan(0);
      // The machine stops: the process runs no instruction and its network sends nothing, not
      // even a FIN or a reset (its sockets stay open on the servers' side).
      a.child.kill('SIGSTOP');
      for (const { proxy } of [db, redis, telegram]) proxy.cut('blackhole');
      const stoppedAt = Date.now();
      const pressId = press(plan.message_id, 'Approve');
      await roleIs(b, 'leader');
      console.log(
        `machine-stop story: the standby led ${Date.now() - stoppedAt} ms after the stop`,
      );
      await waitUntil(() => fake.callbackAnswers.has(pressId), {
        timeoutMs: 60_000,
        message: `the press was never answered:\n${b.output()}`,
      });
      await reachesReview(b);

      // The machine comes back (a frozen VM resumed): the old leader finds the lease gone,
      // stops leading and exits for a restart, applying nothing.
      for (const { proxy } of [db, redis, telegram]) proxy.restore();
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
