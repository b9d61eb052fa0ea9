/**
 * The chat stories every platform must pass, written once against PlatformDriver: a run started
 * from the chat, its status edited in place, refused presses, approve, reject with a reason, a
 * duplicate delivery, restarts between checkpoint and press (the press lands, the status message
 * goes on being edited), four-eyes and a quorum of two. Each platform's test file calls
 * `contractStories` with its driver.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import {
  checkpointButtonsOn,
  type Persona,
  type PlatformDriver,
  type SeenMessage,
} from './platform-driver.ts';
import { runCli, runIdOf, World } from './world.ts';

/** What a platform's test file passes in. */
export interface ContractSubject {
  /** Starts the platform's fake and returns its driver. */
  start(): Promise<PlatformDriver>;
}

const STATUS = /^Run \S+ · Demo/;
const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Private answers start with a capital, even when they start with a name. */
const sentence = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/** Registers the shared stories for one platform. */
export function contractStories(subject: ContractSubject): void {
  let d: PlatformDriver;
  let w: World;

  beforeEach(async () => {
    d = await subject.start();
    w = await World.create([d]);
    return () => w.cleanup();
  });

  /**
   * On a platform with one person (the console), Alice and Bob are that person; Carol and Dave
   * act from outside the chat, as `phasebridge approve` does (actor `cli:<name>`).
   */
  const outsider = (who: Persona): boolean => d.singleUser && (who === 'carol' || who === 'dave');
  /** How a persona is named in messages. */
  const nameOf = (who: Persona): string => (outsider(who) ? who : d.displayName(who));

  /** `who` approves the checkpoint of `cp`: a press answered with `expected`, or from outside. */
  async function approve(who: Persona, cp: SeenMessage, expected: string): Promise<void> {
    const checkpointId = /Checkpoint (\S+) —/.exec(cp.text)![1]!;
    if (outsider(who)) return w.approveOutside(runIdOf(cp), checkpointId, who);
    expect(await d.answerTo(await d.press(who, cp, 'Approve'))).toBe(expected);
  }

  async function startDemo() {
    await d.sendCommand('alice', 'run demo add login');
    const plan = await w.message(d, /Checkpoint plan:1/);
    return { plan, runId: runIdOf(plan) };
  }

  describe('a run driven from the chat', () => {
    it('starts with a command, edits one status message in place and moves on when approved', async () => {
      await d.sendCommand('alice', 'run demo add login');
      const status = await w.message(d, STATUS);
      const runId = runIdOf(status);
      const run = await w.bridge.orchestrator.getRun(runId);
      expect(run.spec).toBe('add login');
      expect(run.startedBy.id).toBe(`${d.platform}:${d.userId('alice')}`);

      const plan = await w.message(d, /Checkpoint plan:1/);
      expect(plan.buttons).toEqual(checkpointButtonsOn(d));
      expect(plan.text).toContain('Policy: needs 1 approval');
      const waiting = await w.settles(
        d,
        status,
        (m) => /✅ plan[\s\S]*✋ waiting for approval/.test(m.text),
        'the status message to show the checkpoint',
      );
      expect(waiting.edited).toBe(true);

      await approve('bob', plan, 'Approved — 1 of 1 approval; the run moves on');
      const decided = await w.settles(d, plan, (m) => m.buttons.length === 0, 'the buttons to go');
      expect(decided.text).toMatch(
        new RegExp(
          `✅ Checkpoint plan:1 — run \\S+\\nApproved by ${esc(nameOf('bob'))} at \\d{4}-`,
        ),
      );

      const review = await w.message(d, /Checkpoint review:1/);
      expect(review.buttons).toEqual(checkpointButtonsOn(d));
      expect(await d.answerTo(await d.press('bob', review, 'Approve'))).toMatch(/^Approved/);
      await w.message(d, /🏁 Run \S+ Completed/);
      // Still the one status message, edited to the end.
      expect(w.messages(d, STATUS).map((m) => m.id)).toEqual([status.id]);
      expect(w.current(d, status)!.text).toMatch(/Completed[\s\S]*✅ review/);
    });

    it('refuses a press without the approver role, privately, and nothing changes', async () => {
      const { plan, runId } = await startDemo();
      // One person only: the console's admin is demoted to viewer for the press.
      const refused: Persona[] = d.singleUser ? ['alice'] : ['carol', 'alice'];
      if (d.singleUser) await w.setRole(d, 'alice', 'viewer');
      for (const who of refused) {
        expect(await d.answerTo(await d.press(who, plan, 'Approve'))).toBe(
          'You are not allowed to answer checkpoints here.',
        );
      }
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.status).toBe('awaiting');
      expect(state.checkpoint!.votes).toEqual([]);
      expect(w.current(d, plan)).toEqual(plan);
      const audit = await w.bridge.repos.audit.listRecent({ action: 'button', outcome: 'refused' });
      expect(audit.map((e) => e.actor).sort()).toEqual(
        refused.map((who) => `${d.platform}:${d.userId(who)}`).sort(),
      );

      if (d.singleUser) await w.setRole(d, 'alice', 'admin');
      expect(await d.answerTo(await d.press('bob', plan, 'Approve'))).toMatch(/^Approved/);
    });

    it('rejects with the reason given in the prompt', async () => {
      const { plan, runId } = await startDemo();
      const reject = await d.press('bob', plan, 'Reject');
      expect(await d.answerTo(reject)).toContain(
        'Reply to the prompt below with your reason to reject.',
      );
      await d.replyReason(reject, 'needs tests first');
      await w.message(
        d,
        new RegExp(`❌ Run \\S+ Failed: rejected by ${esc(nameOf('bob'))}: needs tests first`),
      );
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.status).toBe('failed');
      expect(state.checkpoints.at(-1)!.votes.map((v) => v.actor.id)).toEqual([
        `${d.platform}:${d.userId('bob')}`,
      ]);
      const edited = await w.settles(d, plan, (m) => m.buttons.length === 0, 'the buttons to go');
      expect(edited.text).toMatch(
        new RegExp(`❌ Checkpoint plan:1 — run \\S+\\nRejected by ${esc(nameOf('bob'))} at `),
      );
      expect(edited.text).toContain('Reason given: needs tests first');
    });

    it('acts once on a command delivered twice', async () => {
      await d.deliverTwice('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      // A later command is answered after the duplicate was handled.
      await d.sendCommand('alice', 'runs');
      expect((await w.message(d, /^Recent runs:/)).text).toContain(runId);
      expect((await w.bridge.orchestrator.listRuns()).map((r) => r.id)).toEqual([runId]);
      expect(w.messages(d, STATUS)).toHaveLength(1);
      expect(w.messages(d, /Checkpoint plan:1/)).toHaveLength(1);
      const audit = await w.bridge.repos.audit.listRecent({ action: 'command:run' });
      expect(audit.map((e) => e.outcome)).toEqual(['allowed']);
    });

    it('takes a press on the checkpoint after the bridge restarted', async () => {
      const { plan, runId } = await startDemo();
      await w.restart();
      // The press lands on the message posted before the restart (the console keeps it too).
      expect(w.current(d, plan)).toEqual(plan);
      expect(w.messages(d, /Checkpoint plan:1/)).toHaveLength(1);
      await approve('bob', plan, 'Approved — 1 of 1 approval; the run moves on');
      await w.runState(runId, (s) => s.cursor > 0, 'the run to move on');
      await w.settles(
        d,
        plan,
        (m) => m.buttons.length === 0 && /Approved by/.test(m.text),
        'the message to show the decision',
      );
      // The next checkpoint of the same run comes from the new bridge.
      const review = await w.message(d, /Checkpoint review:1/);
      expect(review.buttons).toEqual(checkpointButtonsOn(d));
    });

    it('rejects with a reason given after the bridge restarted', async () => {
      const { plan, runId } = await startDemo();
      const reject = await d.press('bob', plan, 'Reject');
      expect(await d.answerTo(reject)).toContain(
        'Reply to the prompt below with your reason to reject.',
      );
      await w.restart();
      await d.replyReason(reject, 'needs tests first');
      await w.message(
        d,
        new RegExp(`❌ Run \\S+ Failed: rejected by ${esc(nameOf('bob'))}: needs tests first`),
      );
      expect((await w.bridge.orchestrator.getRun(runId)).status).toBe('failed');
    });

    it('keeps editing the same status message after a restart', async () => {
      const { plan } = await startDemo();
      const status = await w.settles(
        d,
        await w.message(d, STATUS),
        (m) => /✋ waiting for approval/.test(m.text),
        'the status message to show the checkpoint',
      );
      await w.restart();
      await approve('bob', plan, 'Approved — 1 of 1 approval; the run moves on');
      const moved = await w.settles(
        d,
        status,
        (m) => /Waiting for an answer at checkpoint review:1/.test(m.text),
        'the status message from before the restart to show the next checkpoint',
      );
      expect(moved.text).toMatch(/✅ plan/);
      // Edited in place: no second status message was posted.
      expect(w.messages(d, STATUS).map((m) => m.id)).toEqual([status.id]);
    });
  });

  describe('one truth across processes', () => {
    it('edits every copy and posts the next checkpoint when the CLI approves while the bridge runs', async () => {
      const { plan, runId } = await startDemo();
      const cli = await runCli(w, ['approve', runId, '--reason', 'plan looks good']);
      expect(cli.err).not.toMatch(/error/i);
      expect(cli.code).toBe(0);
      // The bridge drove the run: the CLI printed where it stands.
      expect(cli.out).toMatch(/review:1/);
      const decided = await w.settles(d, plan, (m) => m.buttons.length === 0, 'the buttons to go');
      expect(decided.text).toMatch(/Approved by \S+ at \d{4}-/);
      expect(decided.text).toContain('plan looks good');
      const review = await w.message(d, /Checkpoint review:1/);
      expect(review.buttons).toEqual(checkpointButtonsOn(d));
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.checkpoints[0]!.decision!.by[0]!.id).toMatch(/^cli:/);
    });

    it('shows at start-up what the CLI did while no bridge ran', async () => {
      const { plan, runId } = await startDemo();
      await w.stop();
      const cli = await runCli(w, ['approve', runId, '--reason', 'approved offline']);
      expect(cli.code).toBe(0);
      expect((await runCli(w, ['status', runId])).out).toMatch(/review:1/);
      await w.start();
      const decided = await w.settles(d, plan, (m) => m.buttons.length === 0, 'the copy edited');
      expect(decided.text).toContain('approved offline');
      const review = await w.message(d, /Checkpoint review:1/);
      expect(review.buttons).toEqual(checkpointButtonsOn(d));
      expect(w.messages(d, /Checkpoint review:1/)).toHaveLength(1);
    });
  });

  describe('an unbound chat', () => {
    it('answers a command with one short line saying how to pair', async () => {
      await w.bridge.repos.bindings.remove(d.chatRef, null);
      await d.sendCommand('alice', 'status');
      const answer = await w.message(d, /not bound/);
      const how = { telegram: '/pair', discord: '/pair', slack: '/pb pair', web: 'pair' };
      // Slack's and Discord's drivers show code spans in their own markup, between backticks.
      expect(answer.text.replace(/`/g, '')).toBe(
        `This chat is not bound. An admin can pair it: send ${how[d.platform]} CODE (the code phasebridge serve prints).`,
      );
      expect(answer.buttons).toEqual([]);
    });
  });

  describe('checkpoint policies', () => {
    it('applies four-eyes: the starter cannot approve, someone else can', async () => {
      w.workflow(
        'gated',
        'name: Gated\nsteps:\n  - id: build\n    agent: demo\n    prompt: build it\n    checkpoint:\n      when: after\n      fourEyes: true\n',
      );
      // Bob may start runs (an approver is an operator too) and approve, but not his own run.
      await d.sendCommand('bob', 'run gated ship it');
      const cp = await w.message(d, /Checkpoint build:1/);
      const runId = runIdOf(cp);
      expect(cp.text).toContain('Policy: needs 1 approval, not from the requester');
      expect(await d.answerTo(await d.press('bob', cp, 'Approve'))).toMatch(
        new RegExp(
          `^Four-eyes rule: ${esc(nameOf('bob'))} started this run and cannot approve checkpoint build:1`,
        ),
      );
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.startedBy.id).toBe(`${d.platform}:${d.userId('bob')}`);
      expect(state.checkpoint!.votes).toEqual([]);
      expect(w.current(d, cp)).toEqual(cp);

      await approve('dave', cp, 'Approved — 1 of 1 approval; the run moves on');
      const decided = await w.settles(d, cp, (m) => m.buttons.length === 0, 'the decision');
      expect(decided.text).toMatch(new RegExp(`Approved by ${esc(nameOf('dave'))} at`));
      await w.message(d, /🏁 Run \S+ Completed/);
    });

    it('needs two distinct approvers for a quorum of two', async () => {
      w.workflow(
        'quorum',
        'name: Quorum\nsteps:\n  - id: build\n    agent: demo\n    prompt: build it\n    checkpoint:\n      when: after\n      approvals: 2\n',
      );
      await d.sendCommand('alice', 'run quorum ship it');
      const cp = await w.message(d, /Checkpoint build:1/);
      const runId = runIdOf(cp);
      expect(cp.text).toContain('Policy: needs 2 approvals');
      await approve('bob', cp, 'Approved — 1 of 2 approvals');
      const first = `approved by ${esc(nameOf('bob'))} \\(1 of 2 approvals\\)`;
      const voted = await w.settles(
        d,
        cp,
        (m) => new RegExp(`Votes: ${first}`).test(m.text),
        'the first vote to show',
      );
      expect(voted.buttons).toEqual(checkpointButtonsOn(d));
      expect(await d.answerTo(await d.press('bob', cp, 'Approve'))).toBe(
        sentence(`${nameOf('bob')} already voted on checkpoint build:1`),
      );
      expect((await w.bridge.orchestrator.getRun(runId)).checkpoint!.votes).toHaveLength(1);

      await approve('dave', cp, 'Approved — 2 of 2 approvals; the run moves on');
      const decided = await w.settles(d, cp, (m) => m.buttons.length === 0, 'the decision');
      expect(decided.text).toMatch(
        new RegExp(`Approved by ${esc(nameOf('bob'))} and ${esc(nameOf('dave'))} at`),
      );
      await w.message(d, /🏁 Run \S+ Completed/);
    });
  });
}
