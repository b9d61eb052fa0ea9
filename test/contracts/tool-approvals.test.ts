/**
 * Tool approvals of `permissions: ask` on every platform (Telegram, Slack, Discord, the web
 * console), through the whole bridge as `serve` assembles it: the recorded Claude permission
 * request, asked as the approval MCP server asks, becomes a message with three buttons; a press
 * without the approver role is refused; Allow once returns allow to the agent; Deny returns the
 * reason from the platform's prompt; an unanswered request is denied at its expiry and the
 * message says so; with `fourEyes` the run's starter cannot allow, only deny.
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { EXPIRED_REASON } from '../../src/db/repositories/tool-approvals.ts';
import { decideRequest } from '../../src/jobs/runner/approvals/server.ts';
import { fixture } from '../jobs/runner/helpers.ts';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { WebDriver } from './drivers/web.ts';
import type { PlatformDriver } from './platform-driver.ts';
import { runCli, runIdOf, World } from './world.ts';

const call = JSON.parse(fs.readFileSync(fixture('permission-prompt-exchange.json'), 'utf8')).call;
const request = { toolName: call.arguments.tool_name, input: call.arguments.input };

/** Who lacks the approver role (on the console: alice, demoted for the press). */
const viewer = (d: PlatformDriver) => (d.singleUser ? 'alice' : 'carol');
/** Who may answer and did not start the run (the console has one person). */
const approver = (d: PlatformDriver) => (d.singleUser ? 'alice' : 'dave');

const PLATFORMS: [string, () => Promise<PlatformDriver>][] = [
  ['Telegram', () => TelegramDriver.start()],
  ['Slack', () => SlackDriver.start()],
  ['Discord', () => DiscordDriver.start()],
  ['the web console', () => WebDriver.start()],
];

/** A workflow whose `build` step asks in chat under four-eyes; its `before` gate keeps it idle. */
const GUARDED = `name: Guarded
steps:
  - id: build
    agent: demo
    prompt: build it
    permissions: {mode: ask, fourEyes: true, expiresIn: 5m}
    checkpoint:
      when: before
`;

for (const [name, start] of PLATFORMS) {
  describe(`tool approvals on ${name}`, () => {
    async function ask(expiresInMs = 600_000, guarded = false) {
      const d = await start();
      const w = await World.create([d]);
      if (guarded) w.workflow('guarded', GUARDED);
      // On the console its one person (alice, admin) starts and answers; elsewhere bob starts.
      const starter = d.singleUser ? 'alice' : 'bob';
      await d.sendCommand(starter, guarded ? 'run guarded ship it' : 'run demo add login');
      const runId = runIdOf(
        await w.message(d, guarded ? /Checkpoint build:1/ : /Checkpoint plan:1/),
      );
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
      return { d, w, decision, message, runId };
    }

    it('three buttons; a viewer is refused; Allow once returns allow', async () => {
      const { d, w, decision, message, runId } = await ask();
      try {
        expect(message.text).toContain('Bash: npm test -- --run');
        expect(message.text).not.toContain('four-eyes');
        expect(message.buttons).toEqual(['Allow once', 'Allow for this run (Bash:npm)', 'Deny']);
        // One person only: the console's admin is demoted to viewer for the press.
        if (d.singleUser) await w.setRole(d, 'alice', 'viewer');
        expect(await d.answerTo(await d.press(viewer(d), message, 'Allow once'))).toBe(
          'You are not allowed to answer checkpoints here.',
        );
        expect(w.current(d, message)).toEqual(message);
        if (d.singleUser) await w.setRole(d, 'alice', 'admin');
        expect(await d.answerTo(await d.press(approver(d), message, 'Allow once'))).toBe(
          'Allowed once.',
        );
        expect(await decision).toEqual({ allow: true });
        const closed = await w.settles(
          d,
          message,
          (m) => m.buttons.length === 0,
          'the buttons to go',
        );
        // Named as every other decision names the person, never by id (issue 29).
        expect(closed.text).toContain(`✅ Allowed once by ${d.displayName(approver(d))} at `);
        // `phasebridge audit` names the approver the same way; the id is only in --json.
        const audit = await runCli(w, ['audit', runId]);
        const name = d.displayName(approver(d)).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        expect(audit.out).toMatch(
          new RegExp(` ${name} button:tool allowed: \\[key [^\\]]+\\] once `),
        );
      } finally {
        await w.cleanup();
      }
    });

    it("Deny returns the presser's reason to the agent", async () => {
      const { d, w, decision, message } = await ask();
      try {
        const deny = await d.press(approver(d), message, 'Deny');
        expect(await d.answerTo(deny)).toContain('with your reason to deny');
        await d.replyReason(deny, 'not before the review');
        expect(await decision).toEqual({ allow: false, message: 'not before the review' });
        const closed = await w.settles(
          d,
          message,
          (m) => m.buttons.length === 0,
          'the buttons to go',
        );
        expect(closed.text).toContain(`❌ Denied by ${d.displayName(approver(d))} at `);
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

    it("four-eyes: the run's starter cannot allow, only deny; another approver can allow", async () => {
      const { d, w, decision, message, runId } = await ask(600_000, true);
      try {
        const starter = d.singleUser ? 'alice' : 'bob';
        expect(message.text).toContain('four-eyes: not allowed by the run starter');
        const refusal = new RegExp(
          `^Four-eyes rule: you started run ${runId}, so you cannot allow its tool requests`,
        );
        for (const button of ['Allow once', 'Allow for this run (Bash:npm)']) {
          expect(await d.answerTo(await d.press(starter, message, button))).toMatch(refusal);
        }
        const request = (await w.bridge.repos.toolApprovals.pending())[0]!;
        expect(request.status).toBe('pending');
        expect(w.current(d, message)).toEqual(message);
        const refused = await w.bridge.repos.audit.listRecent({
          action: 'button:tool',
          outcome: 'refused',
        });
        // Both refusals audited, as the starter's.
        const startedBy = (await w.bridge.orchestrator.getRun(runId)).startedBy.id;
        expect(refused.map((e) => e.actor)).toEqual([startedBy, startedBy]);
        for (const e of refused) {
          expect(e.detail).toContain(`four-eyes: ${startedBy} started run ${runId}`);
        }
        if (d.singleUser) {
          const deny = await d.press(starter, message, 'Deny');
          expect(await d.answerTo(deny)).toContain('with your reason to deny');
          await d.replyReason(deny, 'mine to stop');
          expect(await decision).toEqual({ allow: false, message: 'mine to stop' });
        } else {
          expect(await d.answerTo(await d.press('dave', message, 'Allow once'))).toBe(
            'Allowed once.',
          );
          expect(await decision).toEqual({ allow: true });
        }
        await w.settles(d, message, (m) => m.buttons.length === 0, 'the buttons to go');
      } finally {
        await w.cleanup();
      }
    });
  });
}
