/**
 * Issue 12 stories of the agent's words and activity, on every platform: a step's final answer
 * goes in the run's thread (Slack thread under the status message, Telegram reply to it, Discord
 * thread opened on it, the console's run page); while a Claude-telemetry agent works, the status
 * message shows its latest activity and the chat shows "typing…", which stops at the step's end;
 * the checkpoint links to the console's run page when PHASEBRIDGE_PUBLIC_URL is set and shows no
 * server path when it is not.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeEach, describe, expect, it } from 'vitest';
import { type PlatformDriver, type SeenMessage, until } from './platform-driver.ts';
import type { ContractSubject } from './stories.ts';
import { runIdOf, World } from './world.ts';

const AGENT = fileURLToPath(new URL('./fixtures/claude-telemetry-agent.mjs', import.meta.url));

/** One step by the Claude-telemetry agent, with a checkpoint after it. */
const LIVE = `steps:
  - id: build
    agent: claudefix
    prompt: Build the login.
    checkpoint:
      when: after
`;

const CONSOLE_URL = 'https://console.example.test:8080';

/** Registers the live stories for one platform. */
export function liveStories(subject: ContractSubject): void {
  let d: PlatformDriver;
  let w: World;

  beforeEach(async () => {
    d = await subject.start();
    w = await World.create([d]);
    return () => w.cleanup();
  });

  /** Waits for a bot message in the thread of `parent` matching `match`. */
  async function inThread(parent: SeenMessage, match: RegExp): Promise<SeenMessage> {
    const replies = () => d.repliesTo!(parent).filter((m) => match.test(m.text));
    await until(() => replies().length > 0, `${d.platform}: a reply matching ${match}`);
    return replies().at(-1)!;
  }

  /** The answer's place: in the status message's thread, or (console) on the run page. */
  async function answerShown(status: SeenMessage, runId: string, words: string): Promise<void> {
    if (d.repliesTo) {
      const answer = await inThread(status, new RegExp(`💬 \\S+ \\(attempt 1\\) — run ${runId}`));
      expect(answer.text).toContain(words);
      if (d.platform === 'discord') {
        // In the thread, not loose in the channel.
        expect(w.messages(d, /💬/)).toEqual([]);
      }
      return;
    }
    let steps = '';
    await until(async () => {
      steps = (await d.runPage!(runId)).steps ?? '';
      return steps.includes('💬');
    }, 'the answer on the run page');
    expect(steps).toContain(words);
  }

  describe("the agent's words and activity", () => {
    it("posts the step's answer in the run's thread, with no server path", async () => {
      await d.sendCommand('alice', 'run demo add login');
      const status = await w.message(d, /^Run \S+ · Demo/);
      const runId = runIdOf(status);
      const plan = await w.message(d, /Checkpoint plan:1/);
      await answerShown(status, runId, 'demo agent finished');
      // The console links the command to the log page.
      expect(plan.text).toContain(
        d.platform === 'web'
          ? 'Logs: plan log (attempt 1)'
          : `Logs: phasebridge logs ${runId} plan --attempt 1`,
      );
      expect(plan.text).not.toContain(w.workspace);
      expect(plan.text).not.toContain('/.phasebridge/');
    });

    it('shows the agent’s latest activity in the status message, and typing while it works', async () => {
      await w.bridge.repos.agents.add({
        name: 'claudefix',
        engine: 'command',
        argv: [process.execPath, AGENT],
      });
      w.workflow('live', LIVE);
      await d.sendCommand('alice', 'run live add login');
      const status = await w.message(d, /^Run \S+ · live/);
      const runId = runIdOf(status);
      const edited = await w.settles(
        d,
        status,
        (m) => m.text.includes('editing src/login.ts'),
        'the status to show the edit',
      );
      expect(edited.text).toMatch(/⏳ build · running \d+ s?.* · editing src\/login\.ts/);
      fs.writeFileSync(path.join(w.workspace, '.go-1'), '');
      await w.settles(
        d,
        status,
        (m) => m.text.includes('running npm test'),
        'the status to show the test run',
      );
      if (d.typingShown) await until(() => d.typingShown!() > 0, 'typing while the step runs');
      fs.writeFileSync(path.join(w.workspace, '.go-2'), '');

      await w.message(d, /Checkpoint build:1/);
      await answerShown(status, runId, 'Added POST /login with tests.');
      // The status message leaves the activity behind once the step ended.
      await w.settles(d, status, (m) => /✅ build/.test(m.text), 'the status to show build done');
      expect(w.current(d, status)!.text).not.toContain('running npm test');
      if (!d.typingShown) return;
      // Typing stops with the step: none after its end, however long the run then waits.
      const typed = d.typingShown();
      for (const n of [1, 2]) {
        await d.sendCommand('alice', `status ${runId}`);
        await until(() => w.messages(d, /Snapshot: as of/).length >= n, `status answer ${n}`);
      }
      expect(d.typingShown()).toBe(typed);
    });
  });

  describe('with the console URL set (PHASEBRIDGE_PUBLIC_URL)', () => {
    it("links the checkpoint and the answer to the console's run page", async () => {
      await w.cleanup();
      d = await subject.start();
      w = await World.create([d], { env: { PHASEBRIDGE_PUBLIC_URL: CONSOLE_URL } });
      await d.sendCommand('alice', 'run demo add login');
      const status = await w.message(d, /^Run \S+ · Demo/);
      const runId = runIdOf(status);
      const plan = await w.message(d, /Checkpoint plan:1/);
      expect(plan.text).toContain(`Diff and log: ${CONSOLE_URL}/runs/${runId}`);
      expect(plan.text).not.toContain(w.workspace);
      if (d.repliesTo) {
        const answer = await inThread(status, /💬 plan \(attempt 1\)/);
        expect(answer.text).toContain(`Diff and log: ${CONSOLE_URL}/runs/${runId}`);
      }
    });
  });
}
