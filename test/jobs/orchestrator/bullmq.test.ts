/** The orchestrator on the BullMQ driver (a private redis-server), when Redis is available. */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StepProgress } from '../../../src/jobs/orchestrator/types.ts';
import { createBullmqQueue } from '../../../src/jobs/queue/bullmq-driver.ts';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../../support/redis.ts';
import { ALICE, approve, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

const availability = redisAvailable();

if (availability.ok || inCi()) {
  describe('orchestrator on BullMQ', () => {
    let redis: RedisHandle;
    let env: TestEnv | undefined;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    afterEach(async () => {
      await env?.dispose();
      env = undefined;
    });

    it('runs the demo workflow to completion; progress travels through Redis', async () => {
      env = await makeEnv({}, () =>
        createBullmqQueue({ url: redis.url, prefix: `pb-orch-${randomUUID().slice(0, 8)}` }),
      );
      env.workflow(
        'demo2',
        [
          'id: demo2',
          'steps:',
          '  - id: plan',
          '    agent: demo',
          '    prompt: "demo: sleep=150 progress=1"',
          '    checkpoint:',
          '      when: after',
          '  - id: build',
          '    agent: demo',
          '    prompt: build',
          '',
        ].join('\n'),
      );
      const o = await env.open();
      const progress: StepProgress[] = [];
      o.onProgress((p) => progress.push(p));
      const run = await o.startRun({
        workflow: 'demo2',
        workspace: env.workspace,
        spec: 's',
        actor: ALICE,
      });
      expect((await o.waitUntilIdle(run.id)).status).toBe('awaiting');
      const state = await approve(o, run.id, 'cli:approve');
      expect(state.status).toBe('completed');
      expect(progress.map((p) => p.text)).toEqual(['step 1/1']);
      expect(repeatedKeys(ledgerOf(state))).toEqual([]);
      expect((await env.queue.get(`${run.id}:build:1`))?.state).toBe('completed');
    });
  });
} else {
  describe('orchestrator on BullMQ', () => {
    it.skip('needs redis-server (apt-get install -y redis-server, or set REDIS_URL)', () => {});
  });
  process.stderr.write(NO_REDIS_BANNER);
}
