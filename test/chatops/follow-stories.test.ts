/**
 * Who hears about a run: every chat bound to the run's workspace gets its status message and
 * checkpoint copies; a decision or an expiry edits every copy; a block gets a new message.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/telegram.ts';
import { ALICE, BOB, CAROL, STRANGERS, TEAM, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

const buttonsOf = (m: StoredMessage | undefined) =>
  ((m?.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

function workflow(id: string, body: string): void {
  fs.mkdirSync(path.join(w.workspace, 'workflows'), { recursive: true });
  fs.writeFileSync(
    path.join(w.workspace, 'workflows', `${id}.workflow.yaml`),
    `id: ${id}\n${body}`,
  );
}

describe('following runs', () => {
  it('posts to every chat bound to the workspace and edits every copy on the decision', async () => {
    const other = await w.b.repos.bindings.bind({
      chatRef: `telegram:${STRANGERS.id}`,
      workspace: w.workspace,
    });
    await w.b.repos.allowlist.allow(
      { bindingId: other.id },
      'telegram',
      String(BOB.id),
      'approver',
    );
    w.say(ALICE, '/run demo add a login page');
    const here = await w.message(/Checkpoint plan:1/);
    const there = await w.message(/Checkpoint plan:1/, STRANGERS);
    await w.message(/^Run \S+ · Demo/, STRANGERS);
    expect(await w.answerTo(w.press(BOB, there, 'Approve'))).toMatch(/^Approved/);
    for (const [chat, m] of [
      [TEAM, here],
      [STRANGERS, there],
    ] as const) {
      await until(
        () => buttonsOf(w.fake.message(chat.id, m.message_id)).length === 0,
        'both copies',
      );
      expect(w.fake.message(chat.id, m.message_id)!.text).toMatch(/Approved by @bob at/);
    }
  });

  it('applies an expiry and edits the copies the same way', async () => {
    workflow(
      'quick',
      `steps:
  - id: build
    agent: demo
    prompt: build it
    checkpoint:
      when: after
      expiresIn: 300ms
      onExpiry: reject
`,
    );
    w.say(ALICE, '/run quick ship it');
    const cp = await w.message(/Checkpoint build:1/);
    expect(cp.text).toContain('Policy: needs 1 approval; expires in 300 ms, then rejected');
    await w.message(/^❌ Run \S+ Failed/);
    await until(
      () => buttonsOf(w.fake.message(TEAM.id, cp.message_id)).length === 0,
      'the copy edit',
    );
    expect(w.fake.message(TEAM.id, cp.message_id)!.text).toMatch(
      /⌛ Checkpoint build:1 — run \S+\nExpired at .* UTC, then rejected automatically/,
    );
    const runId = /— run (\S+)/.exec(cp.text!)![1]!;
    const rows = await w.b.repos.checkpointMessages.listByCheckpoint(runId, 'build:1');
    expect(rows.map((r) => r.state)).toEqual(['expired']);
  });

  it('re-opens an expired checkpoint: every chat gets a new one with live buttons, the old shows expired', async () => {
    const other = await w.b.repos.bindings.bind({
      chatRef: `telegram:${STRANGERS.id}`,
      workspace: w.workspace,
    });
    await w.b.repos.allowlist.allow(
      { bindingId: other.id },
      'telegram',
      String(BOB.id),
      'approver',
    );
    workflow(
      'kept',
      `steps:
  - id: build
    agent: demo
    prompt: build it
    checkpoint:
      when: after
      expiresIn: 500ms
      onExpiry: keep
`,
    );
    w.say(ALICE, '/run kept ship it');
    const here = await w.message(/Checkpoint build:1/);
    const there = await w.message(/Checkpoint build:1/, STRANGERS);
    const runId = /— run (\S+)/.exec(here.text!)![1]!;
    await until(
      async () => (await w.b.orchestrator.getRun(runId)).checkpoint?.expiredAt !== undefined,
      'the expiry',
    );
    w.say(BOB, `/reopen ${runId}`, STRANGERS);
    await w.message(/^Re-opened the expired checkpoint of run/, STRANGERS);
    for (const [chat, old] of [
      [TEAM, here],
      [STRANGERS, there],
    ] as const) {
      const fresh = await w.message(/Checkpoint build:2/, chat);
      expect(buttonsOf(fresh)).toContain('Approve');
      await until(
        () => buttonsOf(w.fake.message(chat.id, old.message_id)).length === 0,
        'the expired copy edit',
      );
      expect(w.fake.message(chat.id, old.message_id)!.text).toMatch(
        /Checkpoint build:1 — run \S+\nExpired at .* UTC; re-opened at .* UTC as a new checkpoint/,
      );
    }
    const audit = await w.b.repos.audit.listRecent({ actor: `telegram:${BOB.id}` });
    expect(audit.map((e) => [e.action, e.outcome])).toContainEqual(['command:reopen', 'allowed']);
    // Carol has no role in the team chat: refused out loud, nothing changes.
    w.say(CAROL, `/reopen ${runId}`);
    await w.message(/You are not allowed to use reopen here/);
    expect((await w.b.orchestrator.getRun(runId)).checkpoint?.id).toBe('build:2');
  });

  it('announces a blocked run with a new message, and retries on command', async () => {
    workflow(
      'flaky',
      `steps:
  - id: build
    agent: demo
    prompt: "demo: exit=3"
`,
    );
    w.say(ALICE, '/run flaky try it');
    const blocked = await w.message(/^⚠️ Run \S+ Blocked, needs a human/);
    const runId = /Run (\S+)/.exec(blocked.text!)![1]!;
    w.say(ALICE, `/retry ${runId}`);
    expect((await w.message(/^Retrying/)).text).toBe(`Retrying the failed step of run ${runId}.`);
    await until(() => w.messages(/^⚠️ Run \S+ Blocked/).length === 2, 'the second block');
    const status = w.messages(/^Run \S+ · flaky/);
    expect(status).toHaveLength(1);
    expect(status[0]!.text).toMatch(/❌ build/);
  });
});
