/**
 * Issue 18 items 7 and 8 through real runs: CodeMachine's agent log holds the full prompt before
 * the agent's output, and the registry row has the engine and the agent's pid.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';
import { ALICE, makeEnv, type TestEnv } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

describe('codemachine agent logs and registry rows', () => {
  it('log the full prompt before the output; the row has engine and pid', async () => {
    process.env.DEMO_AGENT_BEHAVIOUR = 'sleep=10';
    env = await makeEnv();
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'log the prompt',
      actor: ALICE,
      layout: 'codemachine',
    });
    await o.waitUntilIdle(run.id);
    const logs = path.join(env.workspace, '.codemachine', 'logs');
    const file = fs.readdirSync(logs).find((f) => f.startsWith('agent-1-'));
    expect(file).toBeDefined();
    const text = fs.readFileSync(path.join(logs, file!), 'utf8');
    const prompt = DEMO_WORKFLOW.steps[0]!.prompt;
    const at = text.indexOf(`[phasebridge] prompt:\n${prompt}`);
    expect(at).toBeGreaterThanOrEqual(0);
    expect(text.indexOf('[phasebridge] end of prompt')).toBeGreaterThan(at);
    expect(text.length).toBeGreaterThan(text.indexOf('[phasebridge] end of prompt') + 30);

    const db = new Database(path.join(logs, 'registry.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT engine, pid, status FROM agents WHERE id = 1').get() as {
        engine: string | null;
        pid: number | null;
        status: string;
      };
      expect(row.engine).not.toBeNull();
      expect(row.pid).toBeGreaterThan(0);
      expect(row.status).toBe('completed');
    } finally {
      db.close();
    }
  });
});
