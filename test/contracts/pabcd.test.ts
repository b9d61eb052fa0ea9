/**
 * The pabcd preset end to end through chat on the Telegram fake: `run pabcd …`, the status
 * message's phase strip edited as the phases change, the check gate held closed by a failing
 * exit code (Stop blocks, then a checkpoint that pings and names the gate), an override approved
 * with a reason, the run done, and `phase <run>` telling who moved each phase and why.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { slow } from '../support/slowdown.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import type { SeenMessage } from './platform-driver.ts';
import { until } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

let d: TelegramDriver;
let w: World;
beforeEach(async () => {
  d = await TelegramDriver.start();
  w = await World.create([d]);
  // Every phase attests; the check's exit code 1 keeps the C→D gate closed.
  process.env.DEMO_AGENT_BEHAVIOUR =
    'sleep=20 did="worked the phase" auditOutput="reviewer: no findings" verdict=pass checkOutput="1 test failed" exitCode=1';
});
afterEach(async () => {
  await w.cleanup();
});

/** The phase marked in a status message's strip (`[B]`), if any. */
const markedPhase = (m: SeenMessage | undefined): string | undefined =>
  /(?:^|· )\[([IPABCD])\](?: ·|\s)/m.exec(m?.text ?? '')?.[1];

const ORDER = 'IPABCD';

/**
 * The phase marks the status message showed, from the calls the fake Telegram received: its one
 * post, then every edit of it, in order. Throws if it was posted twice or a call of it failed.
 */
function statusStrips(runId: string, statusId: string): string[] {
  const header = new RegExp(`^<b>Run ${runId}</b> · PABCD`);
  const marks: string[] = [];
  let posts = 0;
  for (const c of d.fake.calls) {
    const text = String(c.params.text ?? '');
    const ofStatus =
      (c.method === 'sendMessage' && header.test(text)) ||
      (c.method === 'editMessageText' && String(c.params.message_id) === statusId);
    if (!ofStatus) continue;
    if (!c.ok) throw new Error(`${c.method} of the status message failed (${c.errorCode})`);
    if (c.method === 'sendMessage') posts += 1;
    const mark = markedPhase({ id: statusId, text, buttons: [], edited: false });
    if (mark === undefined) throw new Error(`a status strip without a phase mark: ${text}`);
    marks.push(mark);
  }
  if (posts !== 1) throw new Error(`the status message was posted ${posts} times`);
  return marks;
}

/** Each mark at or after the one before it (a strip never goes back a phase). */
const inOrder = (marks: readonly string[]): boolean =>
  marks.every((m, i) => i === 0 || ORDER.indexOf(m) >= ORDER.indexOf(marks[i - 1]!));

/** Sends a command and returns the bot's next message. */
async function ask(who: 'alice' | 'bob' | 'carol', text: string): Promise<string> {
  const before = d.latestMessages().length;
  await d.sendCommand(who, text);
  // A group's 20 messages a minute may be spent by the run's own: a reply may wait the minute out.
  await until(() => d.latestMessages().length > before, `an answer to ${text}`, 90_000);
  return d.latestMessages()[before]!.text;
}

describe('the pabcd preset through chat', () => {
  it('shows the phases, stops at the closed check gate, takes an override and finishes', {
    timeout: slow(180_000),
  }, async () => {
    // Followed too: rows of our own run are not announced twice (its status message has them).
    await w.bridge.repos.followed.follow(w.workspace, 0);
    await d.sendCommand('alice', 'run pabcd add a login page');
    const status = await w.message(d, /^Run \S+ · PABCD/);
    const runId = runIdOf(status);

    const cp = await w.message(d, /^✋ Checkpoint /);
    const cpText = cp.text;
    expect(cpText).toContain(`run ${runId}`);
    expect(cpText).toContain('check gate C→D is closed: the check exit code is 1, not 0');
    expect(cpText).toContain('Approve overrides the gate');
    const held = await w.runState(runId, (s) => s.status === 'awaiting', 'the checkpoint');
    expect(held.pabcd).toMatchObject({ phase: 'C', stopBlockPhase: 'C', stopBlockCount: 3 });
    await w.settles(d, status, (m) => markedPhase(m) === 'C', 'the strip at C');
    // The status message is edited in place as the phases change. Telegram takes one message a
    // second per chat and the demo's phases pass in a few ms, so the outbox coalesces the edits
    // waiting for that slot (latest wins) and which middle phases get their own edit depends on
    // timing; what must hold is the order: posted once at I, edited, never back a phase, at C.
    const strips = statusStrips(runId, status.id);
    expect(strips[0]).toBe('I');
    expect(strips.length).toBeGreaterThanOrEqual(2);
    expect(strips.at(-1)).toBe('C');
    expect(inOrder(strips), strips.join(' ')).toBe(true);
    expect(w.current(d, status)?.text).toMatch(/gates: interview ✓, audit ✓, check ✗/);

    // An override needs a reason: it is the evidence codexclaw's ledger records.
    expect(await ask('bob', `approve ${runId}`)).toMatch(/closed gate: give a reason/);
    await d.sendCommand('bob', `approve ${runId} flaky test quarantined in #12`);
    const done = await w.runState(runId, (s) => s.status === 'completed', 'the run to finish');
    expect(done.pabcd?.phase).toBe('D');
    await w.settles(d, status, (m) => markedPhase(m) === 'D', 'the strip at D');
    const finalStrips = statusStrips(runId, status.id);
    expect(finalStrips.at(-1)).toBe('D');
    expect(inOrder(finalStrips), finalStrips.join(' ')).toBe(true);
    // The end is a new message (it pings), besides the edited status.
    await w.message(d, new RegExp(`^🏁 Run ${runId} Completed`));

    const rows = fs
      .readFileSync(path.join(w.workspace, '.codexclaw', 'ledger.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(rows.map((r) => `${r.from}->${r.to}`)).toEqual([
      'IDLE->I',
      'I->P',
      'P->A',
      'A->B',
      'B->C',
      'C->IDLE',
    ]);
    expect(rows.at(-1)).toMatchObject({
      reason: 'done',
      actor: 'human',
      override: true,
      evidence: 'flaky test quarantined in #12',
    });

    const ledgerSize = fs.statSync(path.join(w.workspace, '.codexclaw', 'ledger.jsonl')).size;
    await until(
      async () => (await w.bridge.repos.followed.list())[0]?.offset === ledgerSize,
      'the follower to read the whole ledger',
    );
    expect(w.messages(d, /codexclaw session/)).toEqual([]);

    // `phase <run>` is for viewers: Carol gets it once she is one.
    expect(await ask('carol', `phase ${runId}`)).toBe('You are not allowed to use phase here.');
    await w.setRole(d, 'carol', 'viewer');
    const history = await ask('carol', `phase ${runId}`);
    expect(history).toContain(`Run ${runId} phases`);
    expect(history).toMatch(/B → C · orchestrate by the agent · “worked the phase”/);
    expect(history).toMatch(
      /C → D \(done → IDLE\) · done by @bob · override · “flaky test quarantined in #12”/,
    );
    expect(await ask('carol', 'phase 2026-01-01T000000Z-nosuch')).toMatch(
      /no run 2026-01-01T000000Z-nosuch/i,
    );
  });
});
