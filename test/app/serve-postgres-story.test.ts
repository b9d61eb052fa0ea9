/**
 * `serve` on Postgres: with DATABASE_URL=postgres://… and REDIS_URL (BullMQ) the whole bridge runs
 * against a real `postgres` and a real `redis-server` the test starts, and a chat works as on
 * SQLite through the fake Telegram: a run, its checkpoint, a press on Approve, the next
 * checkpoint. What the bridge wrote is in Postgres (no bridge.db file is made), and /readyz and
 * /metrics read it there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { openPostgresDb } from '../../src/db/dialects/postgres/connection.ts';
import { createLogger } from '../../src/log.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { describeHa } from '../support/ha-suite.ts';
import { slow, waitUntil } from '../support/slowdown.ts';

const TEAM = { id: -2101, type: 'supergroup' as const, title: 'Team' };
const ALICE = { id: 611, first_name: 'Alice', username: 'alice' };

describeHa('serve on Postgres', 'serve-on-Postgres story', (suite) => {
  it(
    'runs a run, its checkpoint and a press, with every row in Postgres',
    async () => {
      process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-serve-pg-'));
      const home = path.join(dir, 'home');
      const url = await suite.pg.createDatabase();
      const fake = await FakeTelegram.start();
      fake.addChat(TEAM);
      const config = loadConfig({
        env: {
          PHASEBRIDGE_HOME: home,
          PHASEBRIDGE_PORT: '0',
          TELEGRAM_BOT_TOKEN: fake.token,
          TELEGRAM_API_ROOT: fake.apiRoot,
          PHASEBRIDGE_METRICS_TOKEN: 'scrape-token-8',
          DATABASE_URL: url,
          REDIS_URL: suite.redis.url,
        },
        cwd: dir,
      });
      const bridge = await startBridge(config, createLogger({ level: 'silent' }), {
        editIntervalMs: 10,
      });
      const reader = await openPostgresDb({ url, maxConnections: 1 });
      try {
        const binding = await bridge.repos.bindings.bind({
          chatRef: `telegram:${TEAM.id}`,
          workspace: bridge.workspace,
        });
        await bridge.repos.allowlist.allow(
          { bindingId: binding.id },
          'telegram',
          String(ALICE.id),
          'approver',
        );
        const ready = await fetch(`${bridge.url}/readyz`);
        expect(ready.status).toBe(200);
        const report = (await ready.json()) as { checks: { name: string; ok: boolean }[] };
        expect(report.checks.find((c) => c.name === 'bridge.db')?.ok).toBe(true);

        fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
        const checkpoint = await waitUntil(
          () =>
            fake
              .botMessages(TEAM.id)
              .find((m) => JSON.stringify(m.replyMarkup ?? {}).includes('Approve')),
          { timeoutMs: 30_000, message: 'no plan checkpoint in the chat' },
        );
        fake.userPresses({
          chatId: TEAM.id,
          messageId: checkpoint.message_id,
          from: ALICE,
          label: 'Approve',
        });
        const run = (await bridge.orchestrator.listRuns())[0]!;
        await waitUntil(
          async () => (await bridge.orchestrator.getRun(run.id)).checkpoint?.stepId === 'review',
          { timeoutMs: 30_000, message: 'the press did not move the run to review' },
        );
        // The review checkpoint reaches the chat too, its copy's message id written back.
        await waitUntil(
          async () => {
            const copies = await reader.kysely
              .selectFrom('checkpoint_messages')
              .select(['checkpoint_id', 'message_ref'])
              .where('run_id', '=', run.id)
              .execute();
            return copies.some((c) => c.checkpoint_id.startsWith('review') && c.message_ref);
          },
          { timeoutMs: 30_000, message: 'the review checkpoint copy has no message id' },
        );

        // Everything the bridge wrote is in Postgres: the run, the decision, the outbox rows.
        const row = await reader.kysely
          .selectFrom('runs')
          .select('status')
          .where('id', '=', run.id)
          .executeTakeFirst();
        expect(row?.status).toBe('awaiting');
        const outbox = await reader.kysely.selectFrom('outbox').select('state').execute();
        expect(outbox.length).toBeGreaterThan(1);
        expect(outbox.some((r) => r.state === 'confirmed')).toBe(true);
        const audit = await reader.kysely
          .selectFrom('audit')
          .select('action')
          .where('outcome', '=', 'allowed')
          .execute();
        // The /run and the press on Approve, audited there too.
        expect(audit.map((a) => a.action)).toEqual(
          expect.arrayContaining(['command:run', 'button']),
        );
        expect(fs.existsSync(path.join(home, 'bridge.db'))).toBe(false);

        const metrics = await waitUntil(
          async () => {
            const body = await (
              await fetch(`${bridge.url}/metrics`, {
                headers: { authorization: 'Bearer scrape-token-8' },
              })
            ).text();
            return body.includes('phasebridge_runs{status="awaiting"} 1') ? body : undefined;
          },
          { message: '/metrics does not count the awaiting run' },
        );
        expect(metrics).toContain('phasebridge_runs{status="awaiting"} 1');
        expect(metrics).toContain(
          'phasebridge_bridge_info{role="leader",database="postgres",queue="bullmq"} 1',
        );
      } finally {
        await bridge.stop();
        await reader.close();
        await fake.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
    slow(120_000),
  );
});
