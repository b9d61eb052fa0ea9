/**
 * Issue 12 stories every platform must pass, against PlatformDriver: Request changes asks for
 * the reason (modal, ForceReply or console field), runs the step again, and the demo agent of the
 * second attempt prints the reason it received; at the step's loop max the press is refused with
 * the limit; the ledger keeps the reason with its author.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { checkpointButtonsOn, type PlatformDriver, until, waitFor } from './platform-driver.ts';
import type { ContractSubject } from './stories.ts';
import { runCli, runIdOf, World } from './world.ts';

/** A review step that may send the run back to plan once. */
const TIGHT = `steps:
  - id: plan
    agent: demo
    prompt: "Plan it. demo: sleep=10"
  - id: review
    agent: demo
    prompt: "Review it. demo: sleep=10"
    loop:
      backTo: plan
      max: 1
    checkpoint:
      when: after
`;

const WRITER = fileURLToPath(new URL('./fixtures/writer-agent.mjs', import.meta.url));

/** One step by an agent that changes files, with a checkpoint after it. */
const WRITE = `steps:
  - id: build
    agent: writer
    prompt: Build it.
    checkpoint:
      when: after
`;

/** Makes the workspace a git repository with README.md (two lines) committed. */
function gitWorkspace(dir: string): void {
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  fs.writeFileSync(path.join(dir, 'README.md'), 'first line\nsecond line\n');
  fs.writeFileSync(path.join(dir, '.gitignore'), 'workflows/\n');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
}

/** Registers the Request changes stories for one platform. */
export function changesStories(subject: ContractSubject): void {
  let d: PlatformDriver;
  let w: World;

  beforeEach(async () => {
    d = await subject.start();
    w = await World.create([d]);
    return () => w.cleanup();
  });

  describe('Request changes', () => {
    it('asks for the reason, runs the step again, and its agent gets the reason', async () => {
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      expect(plan.buttons).toEqual(checkpointButtonsOn(d));
      expect(plan.text).toContain('Request changes: 0 of 3 used; the step runs again');

      const press = await d.press('bob', plan, 'Request changes');
      // Discord shows the modal's prompt in the same private answer.
      expect(await d.answerTo(press)).toContain(
        'Reply to the prompt below with what should change.',
      );
      await d.replyReason(press, 'needs tests for the login form');

      const again = await w.message(d, /Checkpoint plan:2/);
      expect(again.text).toContain('Request changes: 1 of 3 used');
      const decided = await w.settles(d, plan, (m) => m.buttons.length === 0, 'the buttons to go');
      expect(decided.text).toMatch(/Sent back with changes requested by .+ at /);
      expect(decided.text).toContain('Reason given: needs tests for the login form');

      const state = await w.bridge.orchestrator.getRun(runId);
      const author = d.singleUser ? state.feedback![0]!.by.id : `${d.platform}:${d.userId('bob')}`;
      expect(state.feedback?.map((f) => [f.kind, f.by.id, f.stepId, f.text])).toEqual([
        ['changes', author, 'plan', 'needs tests for the login form'],
      ]);
      const log = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
      expect(log).toMatch(
        /demo-agent: feedback from .+ \(changes, .+\): needs tests for the login form/,
      );
      // The prompt is on record (issue 29): what attempt 2 was told, reason included.
      const prompt = await runCli(w, ['logs', runId, 'plan', '--prompt', '--attempt', '2']);
      expect(prompt.code).toBe(0);
      expect(prompt.out).toMatch(
        /## Feedback from reviewers\n\n- .+ \(requested changes, .+\): needs tests for the login form\n/,
      );
    });

    it('takes an operator reply as guidance for the next attempt and refuses a viewer', async (ctx) => {
      if (d.replyTo === undefined) return ctx.skip();
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      await d.replyTo('bob', plan, 'hash passwords with bcrypt');
      await w.message(
        d,
        /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/,
      );
      if (!d.singleUser) {
        await w.setRole(d, 'carol', 'viewer');
        await d.replyTo('carol', plan, 'use md5');
        const refused = /only an operator or above can guide a run here/;
        if (d.privateNotices) {
          // Privately: carol is told, the chat is not.
          const notices = d.privateNotices;
          await until(() => notices.call(d, 'carol').some((t) => refused.test(t)), 'the refusal');
          expect(d.latestMessages().some((m) => refused.test(m.text))).toBe(false);
        } else {
          await w.message(d, refused);
        }
      }
      await d.sendCommand('bob', `changes ${runId} add a test for it`);
      await w.message(d, /Checkpoint plan:2/);
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.feedback?.map((f) => [f.kind, f.text])).toEqual([
        ['guidance', 'hash passwords with bcrypt'],
        ['changes', 'add a test for it'],
      ]);
      const log = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
      expect(log).toMatch(
        /\(guidance, .+\): hash passwords with bcrypt\n.*\(changes, .+\): add a test/,
      );
      expect(log).not.toContain('md5');
      // `logs --prompt` shows the reason given through `changes`, after the note (issue 29).
      const prompt = await runCli(w, ['logs', runId, 'plan', '--prompt', '--attempt', '2']);
      expect(prompt.out).toMatch(
        /- .+ \(guidance, .+\): hash passwords with bcrypt\n- .+ \(requested changes, .+\): add a test for it\n/,
      );
      expect(prompt.out).not.toContain('md5');
    });

    it('takes a guidance reply at a checkpoint to the next step’s agent with the approval, across a restart, and says so', async (ctx) => {
      if (d.replyTo === undefined) return ctx.skip();
      await d.sendCommand('alice', 'run demo add login');
      const plan = await w.message(d, /Checkpoint plan:1/);
      const runId = runIdOf(plan);
      await d.replyTo('bob', plan, 'hash passwords with bcrypt');
      await w.message(
        d,
        /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/,
      );
      const counted = await w.settles(
        d,
        plan,
        (m) => m.text.includes('will go with the decision'),
        'the note on the checkpoint',
      );
      // A Slack thread reply carries the user id only: bob, not seen named before, is named by
      // users.info (docs/feedback.md, "How people are named").
      const author = d.singleUser ? '' : d.displayName('bob');
      expect(counted.text).toContain(`Notes: 1 note from ${author}`);
      // The note is a ledger fact: a restart between the reply and the decision keeps it.
      await w.restart();
      await d.press('bob', counted, 'Approve');
      await w.message(d, /Checkpoint review:1/);
      const build = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'build'), 'utf8');
      expect(build).toMatch(
        /demo-agent: feedback from .+ \(guidance, .+\): hash passwords with bcrypt/,
      );
      const planLog = fs.readFileSync(await w.bridge.orchestrator.logPath(runId, 'plan'), 'utf8');
      expect(planLog).not.toContain('bcrypt');
      // The exact prompt build's agent was given shows the note (`logs --prompt`, issue 29).
      const prompt = await runCli(w, ['logs', runId, 'build', '--prompt']);
      expect(prompt.code).toBe(0);
      expect(prompt.out).toMatch(
        /## Feedback from reviewers\n\n- .+ \(guidance, .+\): hash passwords with bcrypt\n/,
      );
    });

    it('lists the files the step changed in a git workspace, at most 10, then and N more', async () => {
      gitWorkspace(w.workspace);
      await w.bridge.repos.agents.add({
        name: 'writer',
        engine: 'command',
        argv: [process.execPath, WRITER],
      });
      w.workflow('write', WRITE);
      await d.sendCommand('alice', 'run write add files');
      const cp = await w.message(d, /Checkpoint build:1/);
      const block = /Changed by build \(vs [0-9a-f]{7}\):\n([\s\S]*?)\n\n/.exec(cp.text)?.[1];
      // Slack and Discord show the code block's fences as text.
      const lines = (block?.split('\n') ?? []).filter((l) => l !== '```');
      // Bridge files (.phasebridge/) are not the step's changes; 13 files: 10 shown.
      expect(lines).toHaveLength(11);
      expect(lines[0]).toBe('README.md +1 −1');
      expect(lines).toContain('src/file-1.ts (new or binary)');
      expect(lines.at(-1)).toBe('and 3 more');
    });

    it("posts the step's final answer in the run's chat", async () => {
      await d.sendCommand('alice', 'run demo add login');
      const status = await w.message(d, /^Run \S+ · Demo/);
      const plan = await w.message(d, /Checkpoint plan:1/);
      // In the run's thread where the platform has one (live-stories.ts), else in the chat.
      const seen = () => [...d.latestMessages(), ...(d.repliesTo?.(status) ?? [])];
      const answer = await waitFor(
        () => seen().find((m) => /💬 plan \(attempt 1\)/.test(m.text)),
        "the step's answer",
      );
      expect(answer.text).toBe(`💬 plan (attempt 1) — run ${runIdOf(plan)}\ndemo agent finished`);
      expect(answer.buttons).toEqual([]);
    });

    it('refuses Request changes at the loop limit and says why', async () => {
      w.workflow('tight', TIGHT);
      await d.sendCommand('alice', 'run tight add login');
      const first = await w.message(d, /Checkpoint review:1/);
      const runId = runIdOf(first);
      await d.sendCommand('bob', `changes ${runId} split the plan in two`);
      const second = await w.message(d, /Checkpoint review:2/);
      expect(second.text).toContain('Request changes: limit reached (1 of 1 used)');

      const press = await d.press('bob', second, 'Request changes');
      expect(await d.answerTo(press)).toBe(
        'Step review already went back 1 time, its limit (loop max 1): approve or reject checkpoint review:2',
      );
      const state = await w.bridge.orchestrator.getRun(runId);
      expect(state.status).toBe('awaiting');
      expect(state.checkpoint?.id).toBe('review:2');
      expect(state.loopCounters).toEqual({ review: 1 });
      expect(state.feedback?.map((f) => f.text)).toEqual(['split the plan in two']);
    });
  });
}
