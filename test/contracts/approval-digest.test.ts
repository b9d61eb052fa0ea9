/**
 * Issue 36, approvals bound to content, through the whole bridge on Slack, Telegram and Discord
 * (Bolt, grammY and discord.js against the fakes): the checkpoint shows its content digest on
 * every platform; the plan changed after the message was posted refuses the next Approve out
 * loud, every copy shows the new version, and the press after that approves it, once. The
 * decision, the ledger line and the audit row carry the digest.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import type { PlatformDriver, SeenMessage } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

const PLANNER = fileURLToPath(new URL('./fixtures/plan-agent.mjs', import.meta.url));
const PLAN = `steps:
  - id: plan
    agent: planner
    prompt: Plan it.
    artifacts: [plan.md]
    checkpoint:
      when: after
`;
const CONTENT = /Content: plan\.md, ([0-9a-f]{6})/;

let drivers: PlatformDriver[];
let w: World;

beforeEach(async () => {
  drivers = [await SlackDriver.start(), await TelegramDriver.start(), await DiscordDriver.start()];
  w = await World.create(drivers);
  await w.bridge.repos.agents.add({
    name: 'planner',
    engine: 'command',
    argv: [process.execPath, PLANNER],
  });
  w.workflow('plan', PLAN);
});
afterEach(async () => {
  await w.cleanup();
});

const shortOf = (m: SeenMessage): string => CONTENT.exec(m.text)?.[1] ?? '';

describe('an approval is bound to the content its checkpoint showed', () => {
  it('a plan changed after posting: refused, the new version shown everywhere, the next press approves it once', async () => {
    const [slack, telegram] = drivers as [SlackDriver, TelegramDriver, DiscordDriver];
    await telegram.sendCommand('alice', 'run plan add login');
    const copies = new Map<PlatformDriver, SeenMessage>();
    for (const d of drivers) copies.set(d, await w.message(d, /Checkpoint plan:1/));
    const first = shortOf(copies.get(telegram)!);
    expect(first).toMatch(/^[0-9a-f]{6}$/);
    for (const cp of copies.values()) expect(shortOf(cp)).toBe(first);
    const runId = runIdOf(copies.get(telegram)!);
    const opened = await w.bridge.orchestrator.getRun(runId);
    expect(opened.checkpoint!.digest!.slice(0, 6)).toBe(first);

    // A hand edit of the plan after the message went out.
    fs.writeFileSync(path.join(w.workspace, 'plan.md'), '# Plan\n\n1. drop the tests\n');
    const refused = await telegram.press('bob', copies.get(telegram)!, 'Approve');
    expect(await telegram.answerTo(refused)).toMatch(
      /^plan\.md changed after this message was posted\. The checkpoint now shows the new version \(plan\.md, [0-9a-f]{6}\)/,
    );
    const after = await w.bridge.orchestrator.getRun(runId);
    expect(after.status).toBe('awaiting');
    expect(after.checkpoint!.votes).toEqual([]);
    const second = after.checkpoint!.digest!.slice(0, 6);
    expect(second).not.toBe(first);
    for (const [d, cp] of copies) {
      const shown = await w.settles(d, cp, (m) => shortOf(m) === second, 'the new version');
      expect(shown.text).toContain('⚠ plan.md changed after this message was first posted');
      expect(shown.buttons).toContain('Approve');
    }

    // The next press (on another platform) approves the version now shown, once.
    const approve = await slack.press('dave', w.current(slack, copies.get(slack)!)!, 'Approve');
    expect(await slack.answerTo(approve)).toBe('Approved — 1 of 1 approval; the run moves on');
    const decided = await w.runState(runId, (s) => s.checkpoints.length === 1, 'the decision');
    const decision = decided.checkpoints[0]!.decision!;
    expect(decision.answer).toBe('approve');
    expect(decision.digest).toBe(after.checkpoint!.digest);
    expect(decided.checkpoints[0]!.votes).toHaveLength(1);
    for (const [d, cp] of copies) {
      const closed = await w.settles(d, cp, (m) => m.buttons.length === 0, 'the decision');
      expect(closed.text).toContain(`Content: plan.md, ${second}`);
    }
    // The ledger's decision event and the audit row carry the full digest.
    const ledger = fs.readFileSync(
      path.join(w.workspace, '.phasebridge', 'runs', runId, 'ledger.jsonl'),
      'utf8',
    );
    const resolved = ledger
      .split('\n')
      .filter((l) => l.includes('"checkpointResolved"'))
      .map((l) => JSON.parse(l) as { events: { type: string; decision?: { digest?: string } }[] });
    const event = resolved[0]!.events.find((e) => e.type === 'checkpointResolved')!;
    expect(event.decision!.digest).toBe(decision.digest);
    const rows = await w.bridge.repos.audit.listRecent({ action: 'button', limit: 20 });
    const allowed = rows.filter((r) => r.outcome === 'allowed');
    expect(allowed).toHaveLength(1);
    expect(allowed[0]!.detail).toContain(`sha256 ${decision.digest}`);
    expect(
      rows.some((r) => r.outcome === 'refused' && /plan\.md changed/.test(r.detail ?? '')),
    ).toBe(true);
  });

  it('an unchanged plan is approved at the first press, bound to the digest shown', async () => {
    const telegram = drivers[1]!;
    await telegram.sendCommand('alice', 'run plan add login');
    const cp = await w.message(telegram, /Checkpoint plan:1/);
    const approve = await telegram.press('bob', cp, 'Approve');
    expect(await telegram.answerTo(approve)).toBe('Approved — 1 of 1 approval; the run moves on');
    const done = await w.runState(runIdOf(cp), (s) => s.checkpoints.length === 1, 'the decision');
    expect(done.checkpoints[0]!.decision!.digest!.slice(0, 6)).toBe(shortOf(cp));
  });

  it('a typed approve is bound the same way: refused after a change, then approves the new version', async () => {
    const discord = drivers[2]!;
    await discord.sendCommand('alice', 'run plan add login');
    const cp = await w.message(discord, /Checkpoint plan:1/);
    const runId = runIdOf(cp);
    fs.appendFileSync(path.join(w.workspace, 'plan.md'), '3. ship it\n');
    await discord.sendCommand('bob', `approve ${runId}`);
    await w.message(discord, /^plan\.md changed after this message was posted/);
    expect((await w.bridge.orchestrator.getRun(runId)).status).toBe('awaiting');
    await discord.sendCommand('bob', `approve ${runId}`);
    const done = await w.runState(runId, (s) => s.checkpoints.length === 1, 'the decision');
    const approved = done.checkpoints[0]!.decision!.digest!;
    // The version approved is the changed plan's, not the one first shown.
    expect(approved.slice(0, 6)).not.toBe(shortOf(cp));
    expect(done.checkpoints[0]!.digest).toBe(approved);
  });
});
