/**
 * Benchmark: tool approvals (`permissions: ask`) as a person and an agent see them. A bridge
 * built from the real pieces (test/chatops/support.ts: bridge.db, the sqlite queue, the real
 * Orchestrator and Telegram adapter against the fake Bot API, ChatOps) with its control socket;
 * a stand-in agent starts the real `phasebridge approval-server` process the way Claude Code
 * does and speaks MCP to it over stdio (the official client). Each round:
 *   server_start:        spawn of the approval server → its MCP `initialize` answered.
 *   asked_to_buttons:    the agent's `approve` call → the fake answered the sendMessage with
 *                        the three buttons.
 *   press_to_answer:     Allow once pressed → the agent holds its answer.
 *   checkpoint_press_to_edit: in the same run, Approve pressed on the plan checkpoint → the fake
 *                        answered the edit showing the decision (the plain press → edit figure).
 * Times of chat calls are the fake's own answer times. The chat goes straight to the Telegram
 * adapter (no outbox pacing: that is measured by bench/fanout.ts).
 * Goals: asked → buttons ≤ 1000 ms p50; press → answer ≤ 50 ms p50.
 *
 * Run: npx tsx bench/tool-approval.ts [--rounds 10]
 */
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pino } from 'pino';
import { startControlServer } from '../src/control/server.ts';
import { ALICE, BOB, TEAM, until, World } from '../test/chatops/support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(repo, 'bin', 'phasebridge.js');
const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('rounds') ?? 10);
const GOALS = { asked_to_buttons_p50_ms: 1000, press_to_answer_p50_ms: 50 };

function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return {
    p50_ms: Number(at(0.5).toFixed(1)),
    p95_ms: Number(at(0.95).toFixed(1)),
    samples: values.map((v) => Number(v.toFixed(1))),
  };
}

/** When the fake answered the first successful call of `method` after `from` matching `match`. */
async function callAt(
  w: World,
  method: string,
  from: number,
  match: (params: Record<string, unknown>) => boolean,
): Promise<number> {
  let at = 0;
  await until(() => {
    const call = w.fake.calls.find(
      (c) => c.ok && c.method === method && (c.at ?? 0) >= from && match(c.params),
    );
    at = call?.at ?? 0;
    return call !== undefined;
  }, `a ${method}`);
  return at;
}

// Builds dist/ when stale, so that no build lands in a timed server start.
spawnSync(process.execPath, [BIN, '--version'], { stdio: 'ignore' });
const w = await World.create();
const control = await startControlServer({
  home: w.home,
  orchestrator: w.b.orchestrator,
  log: pino({ level: 'silent' }),
  tools: { awaitDecision: (id, signal) => w.b.chatops.awaitToolDecision(id, signal) },
});
const figures = {
  server_start: [] as number[],
  asked_to_buttons: [] as number[],
  press_to_answer: [] as number[],
  checkpoint_press_to_edit: [] as number[],
};
const loadAtStart = Number(os.loadavg()[0]!.toFixed(2));
try {
  for (let round = 0; round < ROUNDS; round++) {
    w.say(ALICE, `/run demo tool approval round ${round}`);
    const plan = await w.message(
      new RegExp(`Checkpoint plan:1 — run \\S+[\\s\\S]*round ${round}\\b`),
    );
    const runId = /— run (\S+)/.exec(plan.text!)![1]!;

    const spawned = Date.now();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'approval-server', '--run', runId, '--step', 'build'],
      env: { PATH: process.env.PATH ?? '', PHASEBRIDGE_HOME: w.home, LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    });
    const agent = new Client({ name: 'bench-agent', version: '1' });
    await agent.connect(transport);
    figures.server_start.push(Date.now() - spawned);

    const asked = Date.now();
    const answer = agent.callTool({
      name: 'approve',
      arguments: { tool_name: 'Bash', input: { command: `npm test -- round-${round}` } },
    });
    const posted = await callAt(w, 'sendMessage', asked, (p) =>
      String(p.text ?? '').includes(`round-${round}`),
    );
    figures.asked_to_buttons.push(posted - asked);
    const message = w
      .messages(/Tool approval — run/)
      .find((m) => m.text?.includes(`round-${round}`))!;

    const pressed = Date.now();
    w.press(BOB, message, 'Allow once');
    await answer;
    figures.press_to_answer.push(Date.now() - pressed);
    await agent.close();

    const approved = Date.now();
    w.press(BOB, plan, 'Approve');
    const edited = await callAt(
      w,
      'editMessageText',
      approved,
      (p) => p.message_id === plan.message_id && /Approved by/.test(String(p.text ?? '')),
    );
    figures.checkpoint_press_to_edit.push(edited - approved);
  }
} finally {
  await control.close();
  await w.cleanup();
}

const asked = summary(figures.asked_to_buttons);
const press = summary(figures.press_to_answer);
console.log(
  JSON.stringify(
    {
      bench: 'tool-approval',
      node: process.version,
      cpus: os.cpus().length,
      load_avg_1m: { start: loadAtStart, end: Number(os.loadavg()[0]!.toFixed(2)) },
      rounds: ROUNDS,
      chat: `telegram fake, chat ${TEAM.id}, no outbox pacing`,
      server_start: summary(figures.server_start),
      asked_to_buttons: asked,
      press_to_answer: press,
      checkpoint_press_to_edit: summary(figures.checkpoint_press_to_edit),
      goal: {
        ...GOALS,
        met:
          asked.p50_ms <= GOALS.asked_to_buttons_p50_ms &&
          press.p50_ms <= GOALS.press_to_answer_p50_ms,
      },
    },
    null,
    2,
  ),
);
