/**
 * Files from the requester reach the agent: the prompt names them, and in git workspace mode the
 * job payload carries their bytes so the worker's own checkout has them too (never committed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stepLogPath } from '../../../src/jobs/orchestrator/run-files.ts';
import { gitFixture } from '../workers/support.ts';
import { ALICE, makeEnv, type TestEnv } from './helpers.ts';

const ONE_STEP = [
  'id: one',
  'steps:',
  '  - id: build',
  '    agent: demo',
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

describe('files from the requester', () => {
  for (const mode of ['shared', 'git'] as const) {
    it(`${mode} workspace mode: the agent finds the attached file the prompt names`, async () => {
      env = await makeEnv();
      if (mode === 'git') gitFixture(env.dir, env.workspace);
      env.workflow('one', ONE_STEP);
      const o = await env.open({ workspaceMode: mode });
      const run = await o.startRun({
        workflow: 'one',
        workspace: env.workspace,
        spec: 's',
        actor: ALICE,
        inputs: [{ name: 'notes.txt', kind: 'text', data: Buffer.from('hello') }],
      });
      const rel = `.phasebridge/runs/${run.id}/inputs/notes.txt`;
      expect(run.inputs).toEqual([{ path: rel, bytes: 5, kind: 'text' }]);
      expect((await o.waitUntilIdle(run.id)).status).toBe('awaiting');
      const log = fs.readFileSync(stepLogPath(env.workspace, run.id, 'build', 1), 'utf8');
      expect(log).toContain(
        `demo-agent: file from the requester: ${rel} (5 bytes in the workspace)`,
      );
      if (mode === 'git') {
        const folder = path.join(env.home, 'work', 'runs', run.id);
        expect(log).toContain(`cwd=${folder}`);
        expect(fs.readFileSync(path.join(folder, rel), 'utf8')).toBe('hello');
      }
    });
  }
});
