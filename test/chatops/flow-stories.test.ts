/**
 * Flow-layout runs in chat: a blocked flow run's reason is said when someone retries or resumes
 * it (flow's iron law), and its files are written under .flow/runs/<id>/.
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

describe('flow runs in chat', () => {
  it('retrying a blocked flow run says why it was blocked', async () => {
    fs.mkdirSync(path.join(w.workspace, 'workflows'), { recursive: true });
    fs.writeFileSync(
      path.join(w.workspace, 'workflows', 'flowfail.workflow.yaml'),
      `id: flowfail
layout: flow
steps:
  - id: preflight
    agent: demo
    prompt: "demo: exit=3"
`,
    );
    w.say(ALICE, '/run flowfail try it');
    const blocked = await w.message(/^⚠️ Run \S+ Blocked, needs a human/);
    const runId = /Run (\S+)/.exec(blocked.text!)![1]!;
    const runYaml = path.join(w.workspace, '.flow', 'runs', runId, 'run.yaml');
    expect(fs.readFileSync(runYaml, 'utf8')).toContain('status: blocked');
    w.say(ALICE, `/retry ${runId}`);
    expect((await w.message(/^Retrying/)).text).toMatch(
      new RegExp(
        `^Retrying the failed step of run ${runId}\\.\nIt was blocked: step preflight failed: exit code 3`,
      ),
    );
  });
});
