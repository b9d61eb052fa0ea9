/**
 * Tool approvals of `permissions: ask` on Telegram and Slack, through the whole bridge as `serve`
 * assembles it: the recorded Claude permission request, asked as the approval MCP server asks,
 * becomes a message with three buttons; a press without the approver role is refused; Allow once
 * returns allow to the agent; Deny returns the reason from the platform's prompt; an unanswered
 * request is denied at its expiry and the message says so.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXPIRED_REASON } from '../../src/db/repositories/tool-approvals.ts';
import { decideRequest } from '../../src/jobs/runner/approvals/server.ts';
import { fixture } from '../jobs/runner/helpers.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import type { PlatformDriver } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

const call = JSON.parse(fs.readFileSync(fixture('permission-prompt-exchange.json'), 'utf8')).call;
const request = { toolName: call.arguments.tool_name, input: call.arguments.input };

const PLATFORMS: [string, () => Promise<PlatformDriver>][] = [
  ['Telegram', () => TelegramDriver.start()],
  ['Slack', () => SlackDriver.start()],
];

for (const [name, start] of PLATFORMS) {
  describe(`tool approvals on ${name}`, () => {
    async function ask(expiresInMs = 600_000) {
      const d = await start();
      const w = await World.create([d]);
      await d.sendCommand('alice', 'run demo add login');
      const runId = runIdOf(await w.message(d, /Checkpoint plan:1/));
      const decision = decideRequest(
        {
          repo: w.bridge.repos.toolApprovals,
          runId,
          stepId: 'build',
          attempt: 1,
          expiresInMs,
          pollMs: 20,
        },
        request,
      );
      const message = await w.message(d, /Tool approval — run/);
      return { d, w, decision, message };
    }

    it('three buttons; a viewer is refused; Allow once returns allow', async () => {
      const { d, w, decision, message } = await ask();
      try {
        expect(message.text).toContain('Bash: npm test -- --run');
        expect(message.buttons).toEqual(['Allow once', 'Allow for this run (Bash:npm)', 'Deny']);
        expect(await d.answerTo(await d.press('carol', message, 'Allow once'))).toBe(
          'You are not allowed to answer checkpoints here.',
        );
        expect(await d.answerTo(await d.press('bob', message, 'Allow once'))).toBe('Allowed once.');
        expect(await decision).toEqual({ allow: true });
        const closed = await w.settles(
          d,
          message,
          (m) => m.buttons.length === 0,
          'the buttons to go',
        );
        expect(closed.text).toMatch(/✅ Allowed once by /);
      } finally {
        await w.cleanup();
      }
    });

    it("Deny returns the presser's reason to the agent", async () => {
      const { d, w, decision, message } = await ask();
      try {
        const deny = await d.press('bob', message, 'Deny');
        expect(await d.answerTo(deny)).toContain('with your reason to deny');
        await d.replyReason(deny, 'not before the review');
        expect(await decision).toEqual({ allow: false, message: 'not before the review' });
        const closed = await w.settles(
          d,
          message,
          (m) => m.buttons.length === 0,
          'the buttons to go',
        );
        expect(closed.text).toMatch(/❌ Denied by .*: not before the review/);
      } finally {
        await w.cleanup();
      }
    });

    it('an unanswered request is denied at expiry and the message says so', async () => {
      const { d, w, decision, message } = await ask(1500);
      try {
        expect(await decision).toEqual({ allow: false, message: EXPIRED_REASON });
        const closed = await w.settles(
          d,
          message,
          (m) => m.buttons.length === 0,
          'the buttons to go',
        );
        expect(closed.text).toMatch(/⌛ Expired at .*: nobody answered, so it was denied/);
      } finally {
        await w.cleanup();
      }
    });
  });
}
