/**
 * "⚠ full access" in chat when the `full` posture comes from the named agent (`phasebridge
 * agents add --permissions full`), not from the workflow step: the checkpoint message shows the
 * Permissions field, the status message and the `/status` reply mark the step; a step of an
 * agent without a posture is not marked.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, World } from './support.ts';

process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=20';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

// The deploy step waits at its `before` gate: it never runs, so full need not be allowed.
const RISKY = `id: risky
name: Risky
steps:
  - id: tidy
    agent: demo
    prompt: tidy up
  - id: deploy
    agent: deployer
    prompt: ship it
    checkpoint:
      when: before
`;

describe('full access from a named agent', () => {
  it('is shown in the checkpoint, the status message and /status', async () => {
    await w.b.repos.agents.add({
      name: 'deployer',
      engine: 'command',
      argv: [process.execPath, '-e', ''],
      permissions: { posture: 'full' },
    });
    fs.mkdirSync(path.join(w.workspace, 'workflows'), { recursive: true });
    fs.writeFileSync(path.join(w.workspace, 'workflows', 'risky.workflow.yaml'), RISKY);
    w.say(ALICE, '/run risky release');
    const cp = await w.message(/Checkpoint deploy:1/);
    expect(cp.text).toMatch(/Permissions:? full access ⚠/);
    const runId = /— run (\S+)/.exec(cp.text!)![1]!;

    // The step's own line: its mark, then its id.
    const line = (text: string | undefined, step: string) =>
      (text ?? '').split('\n').find((l) => new RegExp(`^\\S+ ${step}( |$)`).test(l));
    const status = await w.message(/^Run \S+ · Risky/);
    expect(line(status.text, 'deploy')).toContain('⚠ full access');
    expect(line(status.text, 'tidy')).not.toContain('full access');

    w.say(ALICE, `/status ${runId}`);
    const reply = await w.message(/^Run \S+ · Risky[\s\S]*as of/);
    expect(line(reply.text, 'deploy')).toContain('⚠ full access');
  });
});
