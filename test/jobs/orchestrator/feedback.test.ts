/**
 * Issue 12 item 2: reviewers' words reach the step's next attempt. The real demo agent prints
 * the feedback file it got; a Claude-like binary on the agent's PATH shows the argv and message
 * of a resumed session, and the fresh session that follows a failed resume.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Actor } from '../../../src/engine/model.ts';
import { stepLogPath } from '../../../src/jobs/orchestrator/run-files.ts';
import { gitFixture } from '../workers/support.ts';
import { ALICE, makeEnv, type TestEnv } from './helpers.ts';

const FAKE_CLAUDE_DIR = fileURLToPath(new URL('./fixtures/fake-claude', import.meta.url));
const BOB: Actor = { id: 'cli:bob', name: 'Bob' };
const CAROL: Actor = { id: 'cli:carol', name: 'Carol' };

const ONE_STEP = (agent: string) =>
  [
    'id: one',
    'steps:',
    '  - id: build',
    `    agent: ${agent}`,
    '    prompt: "Build it. demo: sleep=10"',
    '    checkpoint:',
    '      when: after',
    '',
  ].join('\n');

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

async function startAwaiting(agent: string) {
  env = await makeEnv();
  env.workflow('one', ONE_STEP(agent));
  const o = await env.open();
  const run = await o.startRun({
    workflow: 'one',
    workspace: env.workspace,
    spec: 's',
    actor: ALICE,
  });
  expect((await o.waitUntilIdle(run.id)).status).toBe('awaiting');
  return { o, runId: run.id, ws: env.workspace };
}

describe('feedback for the next attempt', () => {
  it('the demo agent prints guidance and the change request, oldest first, from its feedback file', async () => {
    const { o, runId, ws } = await startAwaiting('demo');
    const guided = await o.command(runId, 'g1', {
      type: 'giveGuidance',
      text: 'use the existing session helper',
      actor: CAROL,
    });
    expect(guided.ok).toBe(true);
    const asked = await o.command(runId, 'c1', {
      type: 'requestChanges',
      reason: 'needs tests',
      actor: BOB,
    });
    expect(asked.ok).toBe(true);
    const after = await o.waitUntilIdle(runId);
    expect(after.checkpoint?.id).toBe('build:2');

    const first = fs.readFileSync(stepLogPath(ws, runId, 'build', 1), 'utf8');
    expect(first).not.toContain('demo-agent: feedback');
    const second = fs.readFileSync(stepLogPath(ws, runId, 'build', 2), 'utf8');
    const lines = second.split('\n').filter((l) => l.startsWith('demo-agent: feedback'));
    expect(lines).toEqual([
      expect.stringMatching(
        /^demo-agent: feedback from Carol \(guidance, .+\): use the existing session helper$/,
      ),
      expect.stringMatching(/^demo-agent: feedback from Bob \(changes, .+\): needs tests$/),
    ]);
    const file = path.join(
      path.dirname(stepLogPath(ws, runId, 'build', 2)),
      'feedback-build-2.json',
    );
    const body = JSON.parse(fs.readFileSync(file, 'utf8'));
    expect(body.feedback.map((f: { byId: string; text: string }) => [f.byId, f.text])).toEqual([
      ['cli:carol', 'use the existing session helper'],
      ['cli:bob', 'needs tests'],
    ]);
    // The ledger keeps every reason with its author.
    expect(after.feedback?.map((f) => [f.kind, f.by.id, f.text])).toEqual([
      ['guidance', 'cli:carol', 'use the existing session helper'],
      ['changes', 'cli:bob', 'needs tests'],
    ]);
  });

  it("resumes a claude agent's own session with --resume <its session id> and the feedback as the message", async () => {
    env = await makeEnv();
    const log = path.join(env.dir, 'claude-calls.jsonl');
    await env.repos.agents.add({
      name: 'coder',
      engine: 'claude',
      argv: [],
      env: { PATH: `${FAKE_CLAUDE_DIR}:${process.env.PATH}`, FAKE_CLAUDE_LOG: log },
    });
    env.workflow('one', ONE_STEP('coder'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'one',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const first = await o.waitUntilIdle(run.id);
    const session = first.steps[0]!.sessionId!;
    expect(session).toMatch(/^sess-\d+$/);
    await o.command(run.id, 'c1', { type: 'requestChanges', reason: 'needs tests', actor: BOB });
    expect((await o.waitUntilIdle(run.id)).checkpoint?.id).toBe('build:2');

    const calls = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(calls).toHaveLength(2);
    // The default argv (with the step's permission flags), unchanged but for the resume.
    expect(calls[0].argv).not.toContain('--resume');
    expect(calls[0].stdin).toContain('Build it.');
    expect(calls[1].argv).toEqual([...calls[0].argv, '--resume', session]);
    expect(calls[1].stdin).toMatch(/Bob \(requested changes, .+\): needs tests/);
    expect(calls[1].stdin).not.toContain('Build it.');
  });

  it('git workspace mode: the worker gets the feedback and the session to resume from the job payload', async () => {
    env = await makeEnv();
    gitFixture(env.dir, env.workspace);
    const log = path.join(env.dir, 'claude-calls.jsonl');
    await env.repos.agents.add({
      name: 'coder',
      engine: 'claude',
      argv: [],
      env: { PATH: `${FAKE_CLAUDE_DIR}:${process.env.PATH}`, FAKE_CLAUDE_LOG: log },
    });
    env.workflow('one', ONE_STEP('coder'));
    const o = await env.open({ workspaceMode: 'git' });
    const run = await o.startRun({
      workflow: 'one',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const session = (await o.waitUntilIdle(run.id)).steps[0]!.sessionId!;
    await o.command(run.id, 'c1', { type: 'requestChanges', reason: 'needs tests', actor: BOB });
    expect((await o.waitUntilIdle(run.id)).checkpoint?.id).toBe('build:2');

    const calls = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(calls).toHaveLength(2);
    expect(calls[1].argv).toEqual([...calls[0].argv, '--resume', session]);
    expect(calls[1].stdin).toMatch(/Bob \(requested changes, .+\): needs tests/);
    // The agent ran in the worker's own folder; its log (with the resume note) reached the bridge.
    const first = fs.readFileSync(stepLogPath(env.workspace, run.id, 'build', 1), 'utf8');
    expect(first).toContain(`cwd=${path.join(env.home, 'work', 'runs', run.id)}`);
    const text = fs.readFileSync(stepLogPath(env.workspace, run.id, 'build', 2), 'utf8');
    expect(text).toContain(`resuming the agent's session ${session}`);
  });

  it('starts a fresh session with the full prompt when the resume fails, and says so in the log', async () => {
    env = await makeEnv();
    const log = path.join(env.dir, 'claude-calls.jsonl');
    await env.repos.agents.add({
      name: 'coder',
      engine: 'claude',
      argv: [],
      env: {
        PATH: `${FAKE_CLAUDE_DIR}:${process.env.PATH}`,
        FAKE_CLAUDE_LOG: log,
        FAKE_CLAUDE_RESUME_FAILS: '1',
      },
    });
    env.workflow('one', ONE_STEP('coder'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'one',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    await o.waitUntilIdle(run.id);
    await o.command(run.id, 'c1', { type: 'requestChanges', reason: 'needs tests', actor: BOB });
    const after = await o.waitUntilIdle(run.id);
    expect(after.checkpoint?.id).toBe('build:2');

    const calls = fs
      .readFileSync(log, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(calls.map((c) => c.argv.includes('--resume'))).toEqual([false, true, false]);
    expect(calls[2].stdin).toContain('Build it.');
    expect(calls[2].stdin).toContain('## Feedback from reviewers');
    expect(calls[2].stdin).toContain('needs tests');
    const text = fs.readFileSync(stepLogPath(env.workspace, run.id, 'build', 2), 'utf8');
    expect(text).toMatch(/resuming session sess-\d+ failed \(.+\); starting a fresh session/);
  });
});
