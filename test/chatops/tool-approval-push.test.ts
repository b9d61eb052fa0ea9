/**
 * Tool approvals pushed over the bridge's control socket, with every bridge.db poll switched
 * off (the bridge looks once an hour, the approval server polls once an hour): the request
 * still shows up in the run's chat with its buttons, a press still reaches the waiting agent,
 * and an unanswered request is still denied at its expiry. The real approval-server process
 * (as Claude starts it) shows the same request in chat while the bridge does not look.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { awaitToolDecision } from '../../src/control/client.ts';
import { controlSocketPath } from '../../src/control/protocol.ts';
import { type ControlServer, startControlServer } from '../../src/control/server.ts';
import { EXPIRED_REASON } from '../../src/db/repositories/tool-approvals.ts';
import { decideRequest } from '../../src/jobs/runner/approvals/server.ts';
import { fixture } from '../jobs/runner/helpers.ts';
import { ALICE, BOB, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const exchange = JSON.parse(fs.readFileSync(fixture('permission-prompt-exchange.json'), 'utf8'));
const request = {
  toolName: exchange.call.arguments.tool_name,
  input: exchange.call.arguments.input,
};
const HOUR = 3_600_000;

let w: World;
let control: ControlServer;
let client: Client | null = null;
beforeEach(async () => {
  w = await World.create({ toolApprovalIntervalMs: HOUR });
  control = await startControlServer({
    home: w.home,
    orchestrator: w.b.orchestrator,
    log: pino({ level: 'silent' }),
    tools: { awaitDecision: (id, signal) => w.b.chatops.awaitToolDecision(id, signal) },
  });
});
afterEach(async () => {
  await client?.close();
  client = null;
  await control.close();
  await w.cleanup();
});

/** A run of the team chat waiting at its plan checkpoint; returns its id. */
async function startRun(): Promise<string> {
  w.say(ALICE, '/run demo add a login page');
  const plan = await w.message(/Checkpoint plan:1/);
  return /— run (\S+)/.exec(plan.text!)![1]!;
}

/** The step's agent asking, the way the approval server asks, with its own polling off. */
function ask(runId: string, expiresInMs = 600_000) {
  const socket = controlSocketPath(w.home);
  return decideRequest(
    {
      repo: w.b.repos.toolApprovals,
      runId,
      stepId: 'build',
      attempt: 1,
      expiresInMs,
      pollMs: HOUR,
      waitForDecision: (id, timeoutMs) => awaitToolDecision(socket, id, timeoutMs),
    },
    request,
  );
}

describe('tool approvals without polling bridge.db', () => {
  it('the request is posted with its buttons and Allow once reaches the waiting agent', async () => {
    const decision = ask(await startRun());
    const message = await w.message(/Tool approval — run/);
    expect(message.text).toContain('Bash: npm test -- --run');
    expect(await w.answerTo(w.press(BOB, message, 'Allow once'))).toBe('Allowed once.');
    expect(await decision).toEqual({ allow: true });
    await w.message(/✅ Allowed once by @bob/);
  });

  it('Deny with a reason reaches the waiting agent', async () => {
    const decision = ask(await startRun());
    const message = await w.message(/Tool approval — run/);
    await w.answerTo(w.press(BOB, message, 'Deny'));
    const prompt = await w.message(/why do you deny Bash: npm test/);
    w.fake.userReplies({
      chatId: message.chat.id,
      messageId: prompt.message_id,
      from: BOB,
      text: 'not on Fridays',
    });
    expect(await decision).toEqual({ allow: false, message: 'not on Fridays' });
  });

  it('an unanswered request is denied at its expiry', async () => {
    const decision = ask(await startRun(), 1500);
    await w.message(/Tool approval — run/);
    expect(await decision).toEqual({ allow: false, message: EXPIRED_REASON });
  });

  it('the real approval-server process gets its request into the chat and its answer back', async () => {
    const runId = await startRun();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'approval-server', '--run', runId, '--step', 'build'],
      env: { PATH: process.env.PATH ?? '', PHASEBRIDGE_HOME: w.home, LOG_LEVEL: 'silent' },
      stderr: 'pipe',
    });
    client = new Client({ name: 'claude-code-recorded', version: '2.1.328' });
    await client.connect(transport);
    const call = client.callTool(exchange.call);
    const message = await w.message(/Tool approval — run/);
    expect(await w.answerTo(w.press(BOB, message, 'Allow once'))).toBe('Allowed once.');
    const result = (await call) as { content: { text: string }[] };
    expect(JSON.parse(result.content[0]!.text)).toMatchObject({ behavior: 'allow' });
  });
});
