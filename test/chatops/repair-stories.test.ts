/**
 * `repair <run>` in chat, end to end: only an admin may use it; a dry run tells what is wrong
 * and what a repair would drop; the repair keeps the ledger's valid prefix and the run goes on.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, BOB, CAROL, TEAM, TEAM_REF, until, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

/** Sends a command and returns the bot's next message in the team chat. */
async function ask(from: typeof ALICE, text: string): Promise<string> {
  const before = w.fake.botMessages(TEAM.id).length;
  w.say(from, text);
  await until(() => w.fake.botMessages(TEAM.id).length > before, `an answer to ${text}`);
  return w.fake.botMessages(TEAM.id)[before]!.text!;
}

describe('repair in chat', () => {
  it('an admin sees what is wrong, then repairs; others are refused', async () => {
    const binding = (await w.b.repos.bindings.find(TEAM_REF))!;
    await w.b.repos.allowlist.allow(
      { bindingId: binding.id },
      'telegram',
      String(CAROL.id),
      'admin',
    );
    w.say(ALICE, '/run demo add a login page');
    const status = await w.message(/^Run \S+ · Demo/);
    const runId = /Run (\S+)/.exec(status.text!)![1]!;
    await w.runState(runId, (s) => s.status === 'awaiting', 'the plan checkpoint');
    await w.message(/Checkpoint plan:1/);
    const ledger = path.join(w.workspace, '.phasebridge', 'runs', runId, 'ledger.jsonl');
    const lines = fs.readFileSync(ledger, 'utf8').split('\n').slice(0, -1);
    lines[2] = lines[2]!.replace('"events":[', '"events":[,');
    fs.writeFileSync(ledger, `${lines.join('\n')}\n`);

    expect(await ask(BOB, `/repair ${runId}`)).toBe('You are not allowed to use repair here.');
    const dry = await ask(CAROL, `/repair ${runId} dry-run`);
    expect(dry).toContain(`run ${runId}: one problem\n  - ledger line 3 is corrupt`);
    expect(dry).toContain(`would keep ledger lines 1-2 of ${lines.length}`);
    expect(dry).toContain('dry run: nothing was changed');
    expect(fs.readFileSync(ledger, 'utf8')).toBe(`${lines.join('\n')}\n`);

    const done = await ask(CAROL, `/repair ${runId}`);
    expect(done).toContain(`dropped ${lines.length - 2} line(s):`);
    expect(done).toMatch(/backups: ledger\.jsonl\.corrupt-/);
    expect(fs.readFileSync(ledger, 'utf8').startsWith(`${lines.slice(0, 2).join('\n')}\n`)).toBe(
      true,
    );
    // The kept lines end with plan running; its job is long over, so plan runs again.
    expect(done).toContain('Step plan was in flight in the kept lines: it runs again.');
    const again = await w.runState(runId, (s) => s.status === 'awaiting', 'plan to run again');
    expect(again.steps[0]).toMatchObject({ status: 'completed', attempt: 2 });
    // plan's second answer is posted once it ran again; it comes before the next ask's answer.
    await until(
      () => w.fake.botMessages(TEAM.id).some((m) => /💬 plan \(attempt 2\)/.test(m.text ?? '')),
      "plan's second answer",
    );
    expect(await ask(CAROL, `/repair ${runId}`)).toMatch(/^run \S+: nothing to repair/);
    const audit = await w.b.repos.audit.listRecent({ action: 'command:repair' });
    expect(audit.map((a) => a.outcome).sort()).toEqual([
      'allowed',
      'allowed',
      'allowed',
      'refused',
    ]);
  });

  it('a command whose projection fails is done, and the reply says what failed', async () => {
    w.say(ALICE, '/run demo add a login page');
    const status = await w.message(/^Run \S+ · Demo/);
    const runId = /Run (\S+)/.exec(status.text!)![1]!;
    await w.runState(runId, (s) => s.status === 'awaiting', 'the plan checkpoint');
    await w.message(/Checkpoint plan:1/);
    const runJson = path.join(w.workspace, '.phasebridge', 'runs', runId, 'run.json');
    fs.rmSync(runJson);
    fs.mkdirSync(runJson);
    const reply = await ask(BOB, `/approve ${runId}`);
    expect(reply).toMatch(/^Checkpoint plan:1 of run \S+: approved/);
    expect(reply).toMatch(/\nWarning: the native projection failed \(.*not a regular file\)/);
    // The ledger has it: the run went on; once the folder is gone run.json is written again.
    fs.rmSync(runJson, { recursive: true });
    const review = await w.runState(runId, (s) => s.checkpoint?.stepId === 'review', 'review');
    // run.json follows each commit's enqueue (written after the next job is queued).
    const seqOnDisk = () =>
      fs.statSync(runJson, { throwIfNoEntry: false })?.isFile() === true
        ? (JSON.parse(fs.readFileSync(runJson, 'utf8')) as { seq: number }).seq
        : -1;
    await until(() => seqOnDisk() >= review.seq, 'run.json');
    expect(seqOnDisk()).toBeGreaterThanOrEqual(review.seq);
  });
});
