/**
 * The assembled bridge (what `serve` runs) as operations sees it: /readyz names every adapter,
 * and /metrics counts platform API calls, 429s and checkpoint decisions as they happen.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/log.ts';
import { FakeTelegram } from '../fakes/telegram.ts';
import { signIn } from '../support/console-login.ts';
import { slow } from '../support/slowdown.ts';

const TEAM = { id: -2001, type: 'supergroup' as const, title: 'Team' };
const ALICE = { id: 601, first_name: 'Alice', username: 'alice' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>) {
  const deadline = Date.now() + slow(20_000);
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function startWithTelegram(): Promise<{ bridge: RunningBridge; fake: FakeTelegram }> {
  process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-app-'));
  const fake = await FakeTelegram.start();
  fake.addChat(TEAM);
  const config = loadConfig({
    env: {
      PHASEBRIDGE_HOME: path.join(dir, 'home'),
      PHASEBRIDGE_PORT: '0',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      PHASEBRIDGE_METRICS_TOKEN: 'scrape-token-7',
    },
    cwd: dir,
  });
  const bridge = await startBridge(config, createLogger({ level: 'silent' }), {
    editIntervalMs: 10,
  });
  cleanups.push(async () => {
    await bridge.stop();
    await fake.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
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
  return { bridge, fake };
}

/** Logs in with the one-time link and returns the session cookie. */
async function login(bridge: RunningBridge): Promise<string> {
  const res = await signIn(bridge.loginUrl);
  expect(res.status).toBe(303);
  return (res.headers.get('set-cookie') ?? '').split(';')[0]!;
}

function metricValue(text: string, name: string, labels: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}}`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('the assembled bridge', () => {
  it('is ready only with every adapter, and counts API calls, 429s and decisions', async () => {
    const { bridge, fake } = await startWithTelegram();
    const ready = await fetch(`${bridge.url}/readyz`);
    expect(ready.status).toBe(200);
    const report = (await ready.json()) as { checks: { name: string; ok: boolean }[] };
    expect(report.checks.map((c) => c.name).sort()).toEqual([
      'bridge.db',
      'chats',
      'queue',
      'telegram',
      'web',
    ]);

    fake.failEvery(3, { methods: ['sendMessage', 'editMessageText'] });
    fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add a login page' });
    const checkpoint = await until('the plan checkpoint', () =>
      fake
        .botMessages(TEAM.id)
        .find((m) => JSON.stringify(m.replyMarkup ?? {}).includes('Approve')),
    );
    fake.userPresses({
      chatId: TEAM.id,
      messageId: checkpoint.message_id,
      from: ALICE,
      label: 'Approve',
    });
    const run = (await bridge.orchestrator.listRuns())[0]!;
    await until('the review checkpoint', async () => {
      const state = await bridge.orchestrator.getRun(run.id);
      return state.checkpoint?.stepId === 'review' ? state : undefined;
    });

    const cookie = await login(bridge);
    // Messages wait in the outbox for Telegram's pace, and chatops sees each update before the
    // metrics do: read them once the 429 and the third step's end were counted, and the runs
    // index (written in a batch after each commit; once read a step behind under load) says so.
    const text = await until('a counted 429, three steps and the run awaiting', async () => {
      const body = await (await fetch(`${bridge.url}/metrics`, { headers: { cookie } })).text();
      const limited = metricValue(
        body,
        'phasebridge_platform_api_calls_total',
        'platform="telegram",outcome="rate_limited"',
      );
      const steps = metricValue(
        body,
        'phasebridge_step_duration_seconds_count',
        'outcome="completed"',
      );
      const awaiting = metricValue(body, 'phasebridge_runs', 'status="awaiting"');
      return limited > 0 && steps >= 3 && awaiting === 1 ? body : undefined;
    });
    expect(
      metricValue(text, 'phasebridge_platform_api_calls_total', 'platform="telegram",outcome="ok"'),
    ).toBeGreaterThan(2);
    expect(
      metricValue(
        text,
        'phasebridge_platform_api_calls_total',
        'platform="telegram",outcome="rate_limited"',
      ),
    ).toBeGreaterThan(0);
    expect(
      metricValue(text, 'phasebridge_checkpoint_decision_seconds_count', 'answer="approve"'),
    ).toBe(1);
    expect(metricValue(text, 'phasebridge_runs', 'status="awaiting"')).toBe(1);
    expect(
      metricValue(
        text,
        'phasebridge_bridge_info',
        'role="leader",database="sqlite",queue="sqlite"',
      ),
    ).toBe(1);
    // plan, build and review each ran once.
    expect(
      metricValue(text, 'phasebridge_step_duration_seconds_count', 'outcome="completed"'),
    ).toBe(3);
    expect((await fetch(`${bridge.url}/metrics`)).status).toBe(401);
    // A Prometheus scraper reads it with the bearer token instead of a console session.
    const scraped = await fetch(`${bridge.url}/metrics`, {
      headers: { authorization: 'Bearer scrape-token-7' },
    });
    expect(scraped.status).toBe(200);
    expect(await scraped.text()).toContain('phasebridge_platform_api_calls_total');
  });
});

describe('/metrics left open on loopback', () => {
  it('answers a scraper without a session or token only when configured so', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-app-open-'));
    const config = loadConfig({
      env: {
        PHASEBRIDGE_HOME: path.join(dir, 'home'),
        PHASEBRIDGE_PORT: '0',
        PHASEBRIDGE_METRICS_OPEN: 'loopback',
      },
      cwd: dir,
    });
    const bridge = await startBridge(config, createLogger({ level: 'silent' }), { worker: false });
    cleanups.push(async () => {
      await bridge.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });
    const res = await fetch(`${bridge.url}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('phasebridge_step_duration_seconds');
    // The console itself still needs its login.
    expect((await fetch(`${bridge.url}/runs`)).status).toBe(401);
  });
});
