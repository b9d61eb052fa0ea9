/**
 * Everything the bridge writes under a workspace's state folders (`.phasebridge/`,
 * `.codemachine/`) is private to its user: files 0600, folders 0700, in every layout, whatever
 * the umask lets through. A real run through the Orchestrator, with a prompt file and a trigger
 * so every kind of file exists, checked while registry.db's -wal and -shm are still open.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Layout } from '../../../src/engine/model.ts';
import { ALICE, makeEnv, type TestEnv } from './helpers.ts';

const DEMO_AGENT = fileURLToPath(new URL('../../../examples/demo-agent.mjs', import.meta.url));

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

// A permissive umask, so a missing explicit mode shows up as 0644/0755.
let umask = 0;
beforeAll(() => {
  umask = process.umask(0o022);
});
afterAll(() => {
  process.umask(umask);
});

/** Every entry under `dir` (itself included), relative to `base`, with its permission bits. */
function walk(dir: string, base: string): { name: string; dir: boolean; mode: string }[] {
  const entry = (p: string, isDir: boolean) => ({
    name: path.relative(base, p),
    dir: isDir,
    mode: (fs.lstatSync(p).mode & 0o777).toString(8),
  });
  return [
    entry(dir, true),
    ...fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
      const p = path.join(dir, d.name);
      return d.isDirectory() ? walk(p, base) : [entry(p, false)];
    }),
  ];
}

const WORKFLOW = [
  'id: modes',
  'steps:',
  '  - id: plan',
  '    agent: demo-file',
  '    prompt: "demo: sleep=0 directive=trigger agent=demo"',
  '    checkpoint: { when: after }',
  '',
].join('\n');

describe.each<Layout>(['native', 'codemachine'])('state file modes (%s layout)', (layout) => {
  it('are 0600 for files and 0700 for folders', async () => {
    env = await makeEnv();
    // The demo agent, reading its prompt from a file the bridge writes into the logs folder.
    await env.repos.agents.add({
      name: 'demo-file',
      engine: 'command',
      argv: [process.execPath, DEMO_AGENT],
      promptVia: 'file',
    });
    env.workflow('modes', WORKFLOW);
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'modes',
      workspace: env.workspace,
      spec: 'modes',
      actor: ALICE,
      layout,
    });
    const state = await o.waitUntilIdle(run.id);
    expect(state.status).toBe('awaiting');

    const folders = layout === 'codemachine' ? ['.phasebridge', '.codemachine'] : ['.phasebridge'];
    const all = folders.flatMap((f) => walk(path.join(env!.workspace, f), env!.workspace));
    const runDir = `.phasebridge/runs/${run.id}`;
    const expected = [
      `${runDir}/ledger.jsonl`,
      `${runDir}/run.json`,
      `${runDir}/logs/plan-1.log`,
      `${runDir}/logs/prompt-plan-1.md`,
      `${runDir}/logs/triggers/plan-1.log`,
    ];
    if (layout === 'native') expected.push(`${runDir}/spec.md`, `${runDir}/directive.json`);
    else {
      expected.push(
        '.codemachine/template.json',
        '.codemachine/memory/directive.json',
        '.codemachine/inputs/specification.md',
        '.codemachine/agents/agent-config.json',
        '.codemachine/logs/registry.db',
        '.codemachine/logs/registry.db-wal',
        '.codemachine/logs/registry.db-shm',
      );
    }
    expect(all.map((e) => e.name)).toEqual(expect.arrayContaining(expected));
    const loose = all.filter((e) => e.mode !== (e.dir ? '700' : '600'));
    expect(loose).toEqual([]);
  });
});
