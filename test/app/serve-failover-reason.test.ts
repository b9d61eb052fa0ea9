/**
 * A Request changes reason in hand when the leader dies (issue 33, found by bench/failover.ts's
 * reason replies). Two real `serve` on one postgres and one redis-server, the fake Telegram:
 * Request changes is pressed at the plan checkpoint and the reason typed in reply to the prompt.
 * The leader dies after it looked the prompt up and before the vote reached the ledger (held
 * there by a lock on the allowlist, which it reads next, then SIGKILLed). Telegram gives the
 * reply, never confirmed, to the standby once it leads: the reason is applied once (the plan runs
 * again with it) and nobody is told their answer "decided nothing".
 */
import pg from 'pg';
import { expect, it } from 'vitest';
import { ALICE, haCluster, ledgerLinesOf, TEAM } from '../support/ha-cluster.ts';
import { describeHa } from '../support/ha-suite.ts';
import { slow, waitUntil } from '../support/slowdown.ts';

const REASON = 'cover the login form with tests';

describeHa('serve failover: a Request changes reason in hand', 'reason-in-hand story', (suite) => {
  it(
    'the leader dies between reading the prompt and the vote: the new leader applies the reason once',
    async () => {
      const { ws, url, fake, roleIs, leaderAndStandby, reachesPlan, reachesReview, press } =
        await haCluster(suite);
      const { a, b } = await leaderAndStandby();
      fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
      const plan = await reachesPlan(a);
      press(plan.message_id, 'Request changes');
      const prompt = await waitUntil(
        () =>
          fake
            .botMessages(TEAM.id)
            .find((m) => /what should change at checkpoint plan:1/.test(m.text ?? '')),
        { timeoutMs: 60_000, message: `no reason prompt:\n${a.output()}` },
      );

      // The allowlist is locked: the leader's handling of the reply stops at its role check.
      const locker = new pg.Client({ connectionString: url });
      await locker.connect();
      suite.cleanups.push(() => locker.end());
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE allowlist IN ACCESS EXCLUSIVE MODE');
      fake.userReplies({
        chatId: TEAM.id,
        messageId: prompt.message_id,
        from: ALICE,
        text: REASON,
      });
      await waitUntil(
        async () =>
          (
            await locker.query(
              `SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'allowlist'::regclass`,
            )
          ).rowCount! > 0,
        { timeoutMs: 60_000, message: `the leader never reached the role check:\n${a.output()}` },
      );
      a.child.kill('SIGKILL');
      await a.exited;
      await locker.query('ROLLBACK');

      await roleIs(b, 'leader');
      const again = await waitUntil(
        () =>
          fake
            .botMessages(TEAM.id)
            .find(
              (m) =>
                /Checkpoint plan:2/.test(m.text ?? '') &&
                JSON.stringify(m.replyMarkup ?? {}).includes('Approve'),
            ),
        {
          timeoutMs: 90_000,
          message: `the reason was never applied:\n${fake
            .botMessages(TEAM.id)
            .map((m) => m.text)
            .join('\n---\n')}\n${b.output()}`,
        },
      );
      expect(fake.botMessages(TEAM.id).map((m) => m.text)).not.toContainEqual(
        expect.stringMatching(/decided nothing/),
      );
      const recorded = ledgerLinesOf(ws)
        .flatMap((l) => l.events as { type: string; entry?: { kind: string; text: string } }[])
        .filter((e) => e.type === 'feedbackRecorded' && e.entry?.kind === 'changes');
      expect(recorded.map((e) => e.entry?.text)).toEqual([REASON]);
      // The run goes on from there as usual.
      press(again.message_id, 'Approve');
      await reachesReview(b);
    },
    slow(300_000),
  );
});
