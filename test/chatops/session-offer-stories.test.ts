/**
 * Interrupted sessions offered in chat (issue 14): a `.coordinator/state.json` left mid-session
 * by the coordinator itself, and a blocked flow run, are announced once when the bridge starts
 * (and on `sessions`) with the seed's summary and Restart / Abort (Resume when phasebridge wrote
 * it); presses are checked like checkpoint presses, applied once, and every copy is edited.
 * Real bridge pieces against the Telegram fake.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/engine/events.ts';
import { readLedger } from '../../src/engine/ledger/ledger-file.ts';
import type { FakeUser, StoredMessage } from '../fakes/telegram.ts';
import { ALICE, BOB, CAROL, STRANGERS, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

/** A viewer of the team chat. */
const EVE: FakeUser = { id: 505, first_name: 'Eve', username: 'eve' };

/** The coordinator's own state file (no phasebridge run behind it), stopped in EXECUTING. */
const OWN_STATE = {
  session_id: 'coord-2026-01-20-abc123',
  state: 'EXECUTING',
  started_at: '2026-01-20T10:00:00Z',
  updated_at: '2026-01-20T10:25:00Z',
  config: {
    execution_mode: 'sequential',
    max_workers: 2,
    autonomy_level: 'autonomous',
    reporting: 'summary-only',
  },
  tasks: { queued: ['TASK-008'], in_progress: ['TASK-007'], completed: ['TASK-006'], failed: [] },
  workers: [],
  merge_queue: [123],
  verification: {
    status: null,
    tests_total: null,
    tests_passed: null,
    build_status: null,
    completed_at: null,
  },
  summary: null,
};

let w: World;
beforeEach(async () => {
  w = await World.create();
  await w.b.repos.allowlist.allow(
    { bindingId: (await w.b.repos.bindings.find(TEAM_REF))!.id },
    'telegram',
    String(EVE.id),
    'viewer',
  );
});
afterEach(async () => {
  await w.cleanup();
});

const OFFER = /Interrupted (coordinator|flow) session/;
const offers = (chat = TEAM) => w.messages(OFFER, chat);
const labels = (m: StoredMessage) =>
  ((m.replyMarkup?.inline_keyboard ?? []) as { text: string }[][]).flat().map((b) => b.text);

/** Presses a button carrying `data` on a message: what a forged press sends. */
function pressForged(from: FakeUser, m: StoredMessage, data: string) {
  m.replyMarkup = { inline_keyboard: [[{ text: 'Forged', callback_data: data }]] };
  return w.press(from, m, 'Forged');
}

async function restart() {
  await w.stop();
  await w.start();
}

describe('interrupted sessions in chat', () => {
  it("the coordinator's own session: announced once with the seed's summary; Abort removes only .coordinator/, applied once, every copy edited", async () => {
    const coord = path.join(w.workspace, '.coordinator');
    fs.mkdirSync(coord);
    fs.writeFileSync(path.join(coord, 'state.json'), JSON.stringify(OWN_STATE));
    fs.writeFileSync(path.join(w.workspace, 'keep.txt'), 'mine\n');
    // A second chat bound to the same workspace, with Alice as operator there too.
    const other = await w.b.repos.bindings.bind({
      chatRef: `telegram:${STRANGERS.id}`,
      workspace: w.workspace,
    });
    await w.b.repos.allowlist.allow(
      { bindingId: other.id },
      'telegram',
      String(ALICE.id),
      'operator',
    );
    await restart();

    const offer = await w.message(OFFER);
    await w.message(OFFER, STRANGERS);
    expect(offer.text).toContain(`Interrupted coordinator session in ${w.workspace}`);
    for (const line of [
      'Session: coord-2026-01-20-abc123',
      'State: EXECUTING',
      'Completed: TASK-006',
      'In progress: TASK-007',
      'Next: check worker progress and continue (unfinished tasks only)',
    ]) {
      expect(offer.text).toContain(line);
    }
    // Not ours: no Resume (the coordinator itself resumes it).
    expect(labels(offer)).toEqual(['Restart', 'Abort']);

    // A restart without an answer does not announce it again.
    // (chatops announces before start() returns.)
    await restart();
    expect(offers()).toHaveLength(1);

    // Nobody without a role, a viewer, or a forged token gets anywhere.
    expect(await w.answerTo(w.press(CAROL, offer, 'Abort'))).toBe(
      'You are not allowed to resume, restart or abort sessions here.',
    );
    expect(await w.answerTo(w.press(EVE, offer, 'Abort'))).toBe(
      'You are not allowed to resume, restart or abort sessions here.',
    );
    expect(fs.existsSync(path.join(coord, 'state.json'))).toBe(true);

    // Two operators press at once: applied once, the second is told who chose.
    const first = w.press(ALICE, offer, 'Abort');
    const second = w.press(BOB, offer, 'Restart');
    expect(await w.answerTo(first)).toBe('Aborting session coord-2026-01-20-abc123…');
    expect(await w.answerTo(second)).toBe('Already chosen: abort by @alice.');
    await until(
      () =>
        (w.messages(OFFER).at(-1)?.text ?? '').includes(
          'session coord-2026-01-20-abc123 aborted: .coordinator/ removed (task branches left alone)',
        ),
      'the outcome on the copy',
    );
    expect(fs.existsSync(coord)).toBe(false);
    expect(fs.readFileSync(path.join(w.workspace, 'keep.txt'), 'utf8')).toBe('mine\n');
    // Both chats' copies show who chose what, without buttons.
    for (const chat of [TEAM, STRANGERS]) {
      await until(
        () => (w.messages(OFFER, chat).at(-1)?.text ?? '').includes('Aborted by @alice'),
        'the copy edited',
      );
      expect(labels(w.messages(OFFER, chat).at(-1)!)).toEqual([]);
    }
    // A forged token is refused like an unknown one.
    expect(await w.answerTo(pressForged(ALICE, offer, 'AAAAAAAAAAAAAAAAAAAAAA.x'))).toBe(
      'This button is not valid any more.',
    );
    const audit = await w.b.repos.audit.listRecent({ action: 'button:session', limit: 20 });
    expect(audit.map((a) => a.outcome).sort()).toEqual([
      'allowed',
      'failed',
      'refused',
      'refused',
      'refused',
    ]);

    // Asked again: nothing is interrupted any more.
    w.say(ALICE, '/sessions');
    expect((await w.message(/interrupted session/i)).text).toBe(
      `No interrupted session in ${w.workspace}.`,
    );
  });

  it('a copy stored but killed before its message id was recorded is posted again, and its token refused', async () => {
    const coord = path.join(w.workspace, '.coordinator');
    fs.mkdirSync(coord);
    fs.writeFileSync(path.join(coord, 'state.json'), JSON.stringify(OWN_STATE));
    // What a bridge SIGKILLed between storing a copy and recording its sent message leaves.
    const lost = await w.b.repos.sessionOffers.add(
      {
        workspace: path.resolve(w.workspace),
        kind: 'coordinator',
        session: OWN_STATE.session_id,
        state: 'EXECUTING',
      },
      TEAM_REF,
    );
    await restart();
    const offer = await w.message(OFFER);
    expect(offer.text).toContain(`Session: ${OWN_STATE.session_id}`);
    expect(await w.b.repos.sessionOffers.findByToken(lost.buttonToken)).toBeNull();
    // The new copy works: its outcome is edited in.
    expect(await w.answerTo(w.press(ALICE, offer, 'Abort'))).toBe(
      `Aborting session ${OWN_STATE.session_id}…`,
    );
    await until(
      () => (w.messages(OFFER).at(-1)?.text ?? '').includes('aborted'),
      'the outcome on the copy',
    );
  });

  it('a blocked flow run: its reason comes first; sessions offers it again; Resume retries the step once', async () => {
    fs.mkdirSync(path.join(w.workspace, 'workflows'), { recursive: true });
    fs.writeFileSync(
      path.join(w.workspace, 'workflows', 'flowfail.workflow.yaml'),
      `id: flowfail
layout: flow
steps:
  - id: preflight
    agent: demo
    prompt: "demo: exit=3"
`,
    );
    w.say(ALICE, '/run flowfail try it');
    const blocked = await w.message(/^⚠️ Run \S+ Blocked, needs a human/);
    const runId = /Run (\S+)/.exec(blocked.text!)![1]!;
    await restart();

    const offer = await w.message(OFFER);
    expect(offer.text!.split('\n')[0]).toBe(
      '⛔ Blocked: step preflight failed: exit code 3: demo agent failed',
    );
    expect(offer.text).toContain(`Session: ${runId}`);
    expect(offer.text).toContain('State: blocked');
    // The next safe action comes from completed_activities (the failure was recorded as one).
    expect(offer.text).toMatch(
      /\nCompleted: (preflight-\S+)\n[\s\S]*\nNext: retry phase preflight \(last recorded activity: \1\)\n/,
    );
    expect(labels(offer)).toEqual(['Resume', 'Restart', 'Abort']);

    // Asked for: a second copy (the first is still open).
    w.say(EVE, '/sessions');
    expect((await w.message(/interrupted session\(s\)/)).text).toBe(
      `1 interrupted session(s) in ${w.workspace}:\nflow session ${runId}: blocked`,
    );
    await until(() => offers().length === 2, 'the second copy');
    const copy = offers().at(-1)!;

    const press = w.press(ALICE, copy, 'Resume');
    const same = structuredClone(press);
    expect(await w.answerTo(press)).toMatch(
      new RegExp(`^Session ${runId} resumed: run ${runId} is `),
    );
    // The same press delivered again changes nothing.
    w.fake.pushUpdate({
      callback_query: (same as unknown as { callback_query: unknown }).callback_query,
    });
    await w.runState(
      runId,
      (s) => s.status === 'blocked' && s.steps[0]!.attempt === 2,
      'the retry',
    );
    for (const m of offers()) {
      await until(
        () => (w.fake.message(TEAM.id, m.message_id)?.text ?? '').includes('Resumed by @alice'),
        'every copy edited',
      );
    }
    const ledger = readLedger(
      path.join(w.workspace, '.phasebridge', 'runs', runId, 'ledger.jsonl'),
    );
    const queued = (ledger.entries as { events: RunEvent[] }[])
      .flatMap((e) => e.events)
      .filter((e) => e.type === 'stepQueued');
    expect(queued).toHaveLength(2);
    // Resumed by this bridge: `sessions` does not offer it again.
    w.say(ALICE, '/sessions');
    await until(() => w.messages(/being resumed/).length === 1, 'the listing');
    expect(offers()).toHaveLength(2);
  });
});
