/**
 * Issue 18 item 2: completedSteps[i].sessionId is the engine's own session id (Claude's
 * `session_id` from its stream-json), reported by the worker while the agent runs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { ALICE, ledgerOf, makeEnv, repeatedKeys, type TestEnv } from './helpers.ts';

const CLAUDE_LIKE = fileURLToPath(new URL('./fixtures/claude-like-agent.mjs', import.meta.url));
const CLAUDE_SESSION = '5f0c2a1e-8d7b-4c3e-9a61-2b7f0e4d9c11';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe("the engine's session id", () => {
  it('replaces the job id in the run and in template.json and registry.db', async () => {
    env = await makeEnv();
    await env.repos.agents.add({
      name: 'claude-like',
      engine: 'command',
      argv: [process.execPath, CLAUDE_LIKE],
    });
    env.workflow('one', 'id: one\nsteps:\n  - id: build\n    agent: claude-like\n    prompt: go\n');
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'one',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
      layout: 'codemachine',
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('completed');
    expect(state.steps[0]!.sessionId).toBe(CLAUDE_SESSION);

    const sessions = ledgerOf(state)
      .flatMap((e) => e.events)
      .filter((e) => e.type === 'sessionInitialized')
      .map((e) => (e.type === 'sessionInitialized' ? e.sessionId : ''));
    // The job id stands in from the start; the engine's id follows once it is printed.
    expect(sessions).toEqual([`${run.id}:build:1`, CLAUDE_SESSION]);
    expect(repeatedKeys(ledgerOf(state))).toEqual([]);

    const cm = path.join(env.workspace, '.codemachine');
    const template = JSON.parse(fs.readFileSync(path.join(cm, 'template.json'), 'utf8'));
    expect(template.completedSteps['0']).toMatchObject({
      sessionId: CLAUDE_SESSION,
      monitoringId: 1,
    });
    const db = new Database(path.join(cm, 'logs', 'registry.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT session_id FROM agents WHERE id = 1').get() as {
        session_id: string | null;
      };
      expect(row.session_id).toBe(CLAUDE_SESSION);
    } finally {
      db.close();
    }
  });
});
