/**
 * Tool approvals of `permissions: ask` in chat, end to end through the Telegram adapter: a
 * permission request (the recorded Claude call, asked the way the approval MCP server asks)
 * becomes a message with three buttons in the run's chat; a press without the approver role is
 * refused; Allow once returns allow to the agent; Deny returns the reason given in a reply; an
 * unanswered request is denied at its expiry, and every message says what happened.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EXPIRED_REASON } from '../../src/db/repositories/tool-approvals.ts';
import { decideRequest } from '../../src/jobs/runner/approvals/server.ts';
import type { StoredMessage } from '../fakes/telegram.ts';
import { fixture } from '../jobs/runner/helpers.ts';
import { ALICE, BOB, CAROL, TEAM, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

const call = JSON.parse(fs.readFileSync(fixture('permission-prompt-exchange.json'), 'utf8')).call;
const request = { toolName: call.arguments.tool_name, input: call.arguments.input };

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

const buttonsOf = (m: StoredMessage | undefined) =>
  ((m?.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

/** A run of the team chat, and the agent of its step asking for a tool (as the MCP server does). */
async function ask(expiresInMs = 600_000) {
  w.say(ALICE, '/run demo add a login page');
  const plan = await w.message(/Checkpoint plan:1/);
  const runId = /— run (\S+)/.exec(plan.text!)![1]!;
  const decision = decideRequest(
    { repo: w.b.repos.toolApprovals, runId, stepId: 'build', attempt: 1, expiresInMs, pollMs: 20 },
    request,
  );
  const message = await w.message(/Tool approval — run/);
  return { runId, decision, message };
}

describe('tool approvals in chat', () => {
  it('shows the tool and its command with three buttons; a viewer is refused; Allow once allows', async () => {
    const { decision, message } = await ask();
    expect(message.text).toContain('The agent wants to use Bash:');
    expect(message.text).toContain('Bash: npm test -- --run');
    expect(buttonsOf(message)).toEqual(['Allow once', 'Allow for this run (Bash:npm)', 'Deny']);

    for (const who of [CAROL, ALICE]) {
      expect(await w.answerTo(w.press(who, message, 'Allow once'))).toBe(
        'You are not allowed to answer checkpoints here.',
      );
    }
    expect((await w.b.repos.toolApprovals.pending()).length).toBe(1);

    expect(await w.answerTo(w.press(BOB, message, 'Allow once'))).toBe('Allowed once.');
    expect(await decision).toEqual({ allow: true });
    await w.message(/✅ Allowed once by @bob/);
    expect(buttonsOf(w.fake.message(TEAM.id, message.message_id))).toEqual([]);
  });

  it('Deny asks for the reason and returns it to the agent', async () => {
    const { decision, message } = await ask();
    expect(await w.answerTo(w.press(BOB, message, 'Deny'))).toBe(
      'Reply to the prompt below with your reason to deny (it is returned to the agent).',
    );
    const prompt = await w.message(/why do you deny Bash: npm test/);
    w.fake.userReplies({
      chatId: TEAM.id,
      messageId: prompt.message_id,
      from: BOB,
      text: 'not before the review',
    });
    expect(await decision).toEqual({ allow: false, message: 'not before the review' });
    await w.message(/❌ Denied by @bob at .*: not before the review/);
  });

  it('an unanswered request is denied at its expiry and the message says so', async () => {
    const { decision } = await ask(1500);
    expect(await decision).toEqual({ allow: false, message: EXPIRED_REASON });
    await w.message(/⌛ Expired at .*: nobody answered, so it was denied/);
  });
});

describe('a tool approval after a kill', () => {
  it('stored but never queued by the killed process: the next one asks the chat, and the answer counts', async () => {
    await w.cleanup();
    w = await World.create({ outbox: true });
    const { runId, message, decision } = await ask();
    // The asking server's poll dies with the first process's bridge.db connection.
    decision.catch(() => undefined);
    const [copy] = await w.b.repos.checkpointMessages.listOpenWithPrefix('tool:');
    await w.stop();
    // What a kill between storing the copy and queueing its send leaves: a copy with no message
    // id, no outbox row, and nothing in the chat.
    const db = new Database(path.join(w.home, 'bridge.db'));
    db.prepare('update checkpoint_messages set message_ref = null where id = ?').run(copy!.id);
    db.prepare(`delete from outbox where owner_json = ?`).run(
      JSON.stringify({ kind: 'checkpoint', id: copy!.id }),
    );
    db.close();
    w.fake.message(TEAM.id, message.message_id)!.deleted = true;

    await w.start();
    const again = await w.message(/Tool approval — run/);
    expect(again.message_id).not.toBe(message.message_id);
    expect(buttonsOf(again)).toContain('Allow once');
    expect(await w.answerTo(w.press(BOB, again, 'Allow once'))).toBe('Allowed once.');
    const request = await w.b.repos.toolApprovals.get(copy!.checkpointId.slice('tool:'.length));
    expect(request).toMatchObject({ runId, status: 'allowed' });
    await w.message(/✅ Allowed once by @bob/);
  });
});
