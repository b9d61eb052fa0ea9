/**
 * One truth across processes: a step run by a `phasebridge worker` process (BullMQ on a private
 * redis-server, the bridge with no in-process worker) shows its agent's activity in the Telegram
 * status message and "typing…" in the chat, read from the step log the worker writes. Skipped
 * with a loud banner without Redis (fails in CI).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  inCi,
  NO_REDIS_BANNER,
  type RedisHandle,
  redisAvailable,
  startRedis,
} from '../support/redis.ts';
import { startWorkerProcess, type WorkerProcess } from '../support/worker-processes.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { until } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

const AGENT = fileURLToPath(new URL('./fixtures/claude-telemetry-agent.mjs', import.meta.url));
const availability = redisAvailable();

if (availability.ok || inCi()) {
  describe('live activity of a step run by a worker process', () => {
    let redis: RedisHandle;
    let w: World | undefined;
    let worker: WorkerProcess | undefined;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis?.stop();
    });
    afterEach(async () => {
      await worker?.stop();
      await w?.cleanup();
    });

    it('shows the activity and typing from the log the worker writes', async () => {
      const d = await TelegramDriver.start();
      w = await World.create([d], { env: { REDIS_URL: redis.url }, bridge: { worker: false } });
      await w.bridge.repos.agents.add({
        name: 'claudefix',
        engine: 'command',
        argv: [process.execPath, AGENT],
      });
      w.workflow(
        'live',
        'steps:\n  - id: build\n    agent: claudefix\n    prompt: Build it.\n    checkpoint:\n      when: after\n',
      );
      worker = await startWorkerProcess({ home: w.home, redisUrl: redis.url, concurrency: 1 });
      await d.sendCommand('alice', 'run live add login');
      const status = await w.message(d, /^Run \S+ · live/);
      const runId = runIdOf(status);
      await w.settles(d, status, (m) => m.text.includes('editing src/login.ts'), 'the edit shown');
      await until(() => d.typingShown() > 0, 'typing while the worker runs the step');
      fs.writeFileSync(path.join(w.workspace, '.go-1'), '');
      await w.settles(d, status, (m) => m.text.includes('running npm test'), 'the test run shown');
      fs.writeFileSync(path.join(w.workspace, '.go-2'), '');
      await w.message(d, /Checkpoint build:1/);
      const log = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'build'), 'utf8');
      expect(log).toContain('"name":"Bash"');
      // The worker process ran it, not this one.
      expect(log).toContain(`claude-telemetry-agent: worker pid ${worker.pid}`);
    });
  });
} else {
  describe('live activity of a step run by a worker process', () => {
    it.skip('needs redis-server (apt-get install -y redis-server, or set REDIS_URL)', () => {});
  });
  process.stderr.write(NO_REDIS_BANNER);
}
