/**
 * Issue 29 stories every platform must pass, against PlatformDriver: what a human writes to a
 * run is never dropped without telling them. A reply to the step's answer or to an
 * acknowledgement is a note for the next attempt, acknowledged; once the run is finished a reply
 * to its outcome is told the words went nowhere and how to start a run; a reply to a reason
 * prompt whose row was swept after it expired is told nothing was applied.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { type PlatformDriver, until, waitFor } from './platform-driver.ts';
import type { ContractSubject } from './stories.ts';
import { runIdOf, World } from './world.ts';

const NOTED =
  /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/;

/** Registers the issue 29 reply stories for one platform. */
export function wordsStories(subject: ContractSubject): void {
  let d: PlatformDriver;
  let w: World;

  beforeEach(async () => {
    d = await subject.start();
    w = await World.create([d]);
    return () => w.cleanup();
  });

  describe('every word is answered', () => {
    it('keeps a reply to the step’s answer or to an acknowledgement as a note, and tells a finished run’s reply it went nowhere', async (ctx) => {
      const replyTo = d.replyTo?.bind(d);
      if (replyTo === undefined) return ctx.skip();
      await d.sendCommand('alice', 'run demo add login');
      const status = await w.message(d, /^Run \S+ · Demo/);
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      // The chat and the run's thread (where the platform has one), each message once.
      const seen = () => [
        ...new Map(
          [...d.latestMessages(), ...(d.repliesTo?.(status) ?? [])].map((m) => [m.id, m]),
        ).values(),
      ];
      const answer = await waitFor(
        () => seen().find((m) => /💬 plan \(attempt 1\)/.test(m.text)),
        "the step's answer",
      );
      const noted = () => seen().filter((m) => NOTED.test(m.text));
      await replyTo('bob', answer, 'keep the form small');
      await until(() => noted().length === 1, 'the note on the answer acknowledged');
      await replyTo('bob', noted()[0]!, 'and document it');
      await until(() => noted().length === 2, 'the note on the acknowledgement acknowledged');
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.feedback?.map((f) => [f.kind, f.text])).toEqual([
        ['guidance', 'keep the form small'],
        ['guidance', 'and document it'],
      ]);

      await d.sendCommand('alice', `cancel ${runId}`);
      const outcome = await w.message(d, new RegExp(`^🛑 Run ${runId} Cancelled`));
      await replyTo('bob', outcome, 'one more thing');
      const gone = new RegExp(
        `^Run ${runId} is finished \\(cancelled\\), so your words went nowhere: no agent will read them\\. To start a new run: (/pb |/)?run <workflow> <task>\\.$`,
      );
      await until(() => seen().some((m) => gone.test(m.text)), 'the finished-run answer');
      const after = await w.bridge.orchestrator.getRun(runId);
      expect(after.feedback?.map((f) => f.text)).toEqual([
        'keep the form small',
        'and document it',
      ]);
    });

    it('answers the edit of a note: the note keeps its first words', async (ctx) => {
      const replyTo = d.replyTo?.bind(d);
      const editLast = d.editLast?.bind(d);
      if (replyTo === undefined || editLast === undefined) return ctx.skip();
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      await replyTo('bob', plan, 'hash passwords with bcrypt');
      await w.message(d, NOTED);
      await editLast('bob', 'hash passwords with argon2');
      await w.message(
        d,
        new RegExp(
          `^Edits are not applied: your note about run ${runId} is kept as you first sent it. To change it, reply again with the correction; both go to the agent.$`,
        ),
      );
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.feedback?.map((f) => f.text)).toEqual(['hash passwords with bcrypt']);
    });

    it('answers the edit of a /run and starts no second run', async (ctx) => {
      const editCommand = d.editCommand?.bind(d);
      if (editCommand === undefined) return ctx.skip();
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      await editCommand('alice', 'run demo add logout');
      await w.message(
        d,
        /^Edits are not applied: a command is read once, as first sent, so no second run was started\. To start a run with the new words, send \/run again as a new message\.$/,
      );
      const runs = await w.bridge.orchestrator.listRuns({});
      expect(runs.map((r) => r.id)).toEqual([runIdOf(plan)]);
    });

    it('answers the bot’s mention alone with a short help', async (ctx) => {
      const mention = d.mentionBot?.bind(d);
      if (mention === undefined) return ctx.skip();
      await mention('bob');
      const help = await w.message(d, /^I am phasebridge: /);
      expect(help.text).toMatch(/Start one with (\/pb |\/)run <workflow> <task>/);
      expect(help.text).toMatch(
        /To guide a run, reply to its messages\. (\/pb |\/)help lists every command\.$/,
      );
    });

    it('tells a reason typed after its expired prompt was swept that nothing was applied', async () => {
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      const press = await d.press('bob', plan, 'Request changes');
      await d.answerTo(press);
      // The sweep of expired prompts (an hour on) removes the row before the reason comes.
      await until(
        async () => (await w.bridge.repos.reasonPrompts.deleteExpired(Date.now() + 7_200_000)) > 0,
        'the prompt swept',
      );
      await d.replyReason(press, 'needs tests');
      await w.message(
        d,
        new RegExp(
          `^That question about run ${runId} expired, so your answer decided nothing: press the button again to answer\\.$`,
        ),
      );
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.checkpoint?.id).toBe('plan:1');
      expect(state.feedback ?? []).toEqual([]);
    });
  });
}
