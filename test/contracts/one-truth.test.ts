/**
 * One truth across processes, beyond the per-platform stories: one bridge per home, hand edits
 * of template.json seen while the bridge runs, and a CLI that drove a run alone handing over to a
 * bridge started meanwhile. Driven through the web console (the cheapest platform to fake).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { redisAvailable, startRedis } from '../support/redis.ts';
import { holdsFor } from '../support/slowdown.ts';
import { WebDriver } from './drivers/web.ts';
import { type PlatformDriver, until } from './platform-driver.ts';
import { runCli, runIdOf, World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

async function world(): Promise<{ w: World; d: PlatformDriver }> {
  const d = await WebDriver.start();
  w = await World.create([d]);
  return { w, d };
}

/** The codemachine layout's template.json of the world's workspace. */
function templateFile(world: World): string {
  return path.join(world.workspace, '.codemachine', 'template.json');
}

const CM_DEMO = `name: Demo on CodeMachine files
layout: codemachine
steps:
  - id: plan
    agent: demo
    prompt: plan it
  - id: build
    agent: demo
    prompt: build it
    checkpoint:
      when: after
`;

describe('one bridge per home', () => {
  it('refuses a second bridge on the same home with a clear message, and the first serves on', async () => {
    const { w, d } = await world();
    const config = loadConfig({
      env: { PHASEBRIDGE_HOME: w.home, PHASEBRIDGE_PORT: '0', LOG_LEVEL: 'silent' },
      cwd: w.dir,
    });
    await expect(startBridge(config, pino({ level: 'silent' }))).rejects.toThrow(
      new RegExp(`a bridge already runs on ${w.home} \\(pid ${process.pid}, since `),
    );
    await d.sendCommand('alice', 'run demo add login');
    await w.message(d, /Checkpoint plan:1/);
  });

  it('the CLI says so too', async () => {
    const { w } = await world();
    const serve = await runCli(w, ['serve']);
    expect(serve.code).toBe(1);
    expect(serve.err).toMatch(/phasebridge: a bridge already runs on /);
  });
});

describe('template.json edited while the bridge runs', () => {
  it('re-runs a step removed from completedSteps, and the chat shows it', async () => {
    const { w, d } = await world();
    w.workflow('cmdemo', CM_DEMO);
    await d.sendCommand('alice', 'run cmdemo add login');
    const cp = await w.message(d, /Checkpoint build:1/);
    const runId = runIdOf(cp);
    const doc = JSON.parse(fs.readFileSync(templateFile(w), 'utf8'));
    expect(Object.keys(doc.completedSteps)).toEqual(['0', '1']);
    delete doc.completedSteps['1'];
    fs.writeFileSync(templateFile(w), JSON.stringify(doc, null, 2));

    // No command is sent: the bridge sees the edit, builds again and asks again.
    await w.message(d, /Checkpoint build:2/);
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.steps.find((s) => s.id === 'build')!.attempt).toBe(2);
    expect(state.steps.find((s) => s.id === 'plan')!.attempt).toBe(1);
    const withdrawn = await w.settles(d, cp, (m) => m.buttons.length === 0, 'the old copy closed');
    expect(withdrawn.text).not.toMatch(/Approved/);
  });

  it('tells the chat when template.json is unreadable, and keeps the run as it was', async () => {
    const { w, d } = await world();
    w.workflow('cmdemo', CM_DEMO);
    await d.sendCommand('alice', 'run cmdemo add login');
    const cp = await w.message(d, /Checkpoint build:1/);
    const runId = runIdOf(cp);
    fs.writeFileSync(templateFile(w), '{ "completedSteps": ');
    const told = await w.message(d, /template\.json cannot be read/);
    expect(told.text).toContain(runId);
    expect(told.text).toContain('keeps its progress');
    const state = await w.bridge.orchestrator.getRun(runId);
    expect(state.status).toBe('awaiting');
    expect(state.checkpoint?.id).toBe('build:1');
    // Told once, not at every check.
    await holdsFor(
      () => w.messages(d, /template\.json cannot be read/).length === 1,
      1200,
      'told again',
    );
  });
});

describe('a run driven by a CLI process when a bridge starts', () => {
  it("reaches the bridge's chats through the change feed", async () => {
    const { w, d } = await world();
    await w.stop();
    // The CLI drives the run alone; its agent is slow enough for the bridge to start meanwhile.
    const slow = `name: Slow\nsteps:\n  - id: work\n    agent: demo\n    prompt: work slowly\n    checkpoint:\n      when: after\n`;
    w.workflow('slow', slow);
    const cli = runCli(w, ['run', 'slow', '--workspace', w.workspace, '--spec', 'take your time'], {
      DEMO_AGENT_BEHAVIOUR: 'sleep=2500',
    });
    let runId = '';
    await until(() => {
      const dir = path.join(w.workspace, '.phasebridge', 'runs');
      runId = fs.existsSync(dir) ? (fs.readdirSync(dir)[0] ?? '') : '';
      return runId !== '';
    }, 'the CLI to start its run');
    await w.start();
    // The checkpoint was opened by the CLI process, after the bridge started.
    const cp = await w.message(d, /Checkpoint work:1/);
    expect(runIdOf(cp)).toBe(runId);
    expect((await cli).code).toBe(0);
  });
});

describe.skipIf(!redisAvailable().ok)('BullMQ: Redis restarted empty mid-step', () => {
  it('the running bridge re-queues the lost job and the run reaches its checkpoint', async () => {
    const redis = await startRedis();
    try {
      if (!redis.restart) return; // REDIS_URL's Redis is not ours to restart
      const d = await WebDriver.start();
      w = await World.create([d], {
        env: { REDIS_URL: redis.url },
        bridge: { supervise: { intervalMs: 100, leaseCheckMs: 300 } },
      });
      w.workflow(
        'slow',
        `name: Slow\nsteps:\n  - id: work\n    agent: demo\n    prompt: |\n      work slowly\n      demo: sleep=1500\n    checkpoint:\n      when: after\n`,
      );
      await d.sendCommand('alice', 'run slow take your time');
      const status = await w.message(d, /^Run \S+ · Slow/);
      const runId = runIdOf(status);
      await w.runState(runId, (s) => s.steps[0]!.status === 'running', 'the step to run');
      await redis.restart();
      const cp = await w.message(d, /Checkpoint work:1/);
      expect(runIdOf(cp)).toBe(runId);
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.status).toBe('awaiting');
      expect(w.messages(d, /was lost by the queue; recovering it/)).toHaveLength(1);
    } finally {
      await w?.cleanup();
      w = undefined;
      await redis.stop();
    }
  });
});
