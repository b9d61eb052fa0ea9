/**
 * Workspaces are untrusted: links an agent plants (or a cloned repository brings) in its
 * workspace never make the bridge write or read a file outside it, fail only that run with a
 * message naming the path, and leave runs in other workspaces alone. Driven through the real
 * Orchestrator with real agent processes; the hostile agent is fixtures/planter-agent.mjs.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import type { Layout, RunState } from '../../../src/engine/model.ts';
import type { Orchestrator } from '../../../src/jobs/orchestrator/orchestrator.ts';
import { ALICE, approve, makeEnv, type TestEnv, waitFor } from './helpers.ts';

const PLANTER = fileURLToPath(new URL('./fixtures/planter-agent.mjs', import.meta.url));

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

/** A file outside every workspace that a planted link points at, and how it looked before. */
interface Victim {
  file: string;
  bytes: Buffer;
  mtimeMs: number;
}

/** Writes `text` to `<dir>/<name>` (unless the file exists already) and records it. */
function victim(dir: string, name: string, text = 'root:x:0:0:victim\n'): Victim {
  const file = path.join(dir, name);
  if (!fs.existsSync(file)) fs.writeFileSync(file, text);
  // An old mtime, so a write in the same millisecond as the check would still show.
  fs.utimesSync(file, new Date(2000, 0, 1), new Date(2000, 0, 1));
  return { file, bytes: fs.readFileSync(file), mtimeMs: fs.statSync(file).mtimeMs };
}

/** The victim still has the bytes and mtime it had before. */
function expectUntouched(v: Victim): void {
  expect(fs.readFileSync(v.file).equals(v.bytes)).toBe(true);
  expect(fs.statSync(v.file).mtimeMs).toBe(v.mtimeMs);
}

/** The planter step, then a demo step that uses whatever was planted. */
function hostileWorkflow(links: string[], layout: Layout): string {
  const prompt = links.map((l) => `link ${l}`).join('\n');
  return [
    'id: hostile',
    `layout: ${layout}`,
    'steps:',
    '  - id: plant',
    '    agent: planter',
    '    prompt: |',
    ...prompt.split('\n').map((l) => `      ${l}`),
    '  - id: build',
    '    agent: demo',
    '    prompt: "demo: sleep=0"',
    '',
  ].join('\n');
}

/** A second workspace with a demo run waiting at its first checkpoint. */
async function bystander(o: Orchestrator, e: TestEnv, layout: Layout): Promise<RunState> {
  const ws = path.join(e.dir, 'ws-other');
  fs.mkdirSync(ws, { recursive: true });
  const run = await o.startRun({
    workflow: 'demo',
    workspace: ws,
    spec: 'other',
    actor: ALICE,
    layout,
  });
  const state = await o.waitUntilIdle(run.id);
  expect(state.status).toBe('awaiting');
  return state;
}

/** The bystander still moves: its checkpoint is approved and the next step runs. */
async function expectStillWorks(o: Orchestrator, run: RunState): Promise<void> {
  const next = await approve(o, run.id, `cli:approve-${run.id}`);
  expect(next.status).toBe('awaiting');
  expect(next.checkpoint?.stepId).toBe('review');
}

/** An env whose workspace has the hostile workflow planting `links`, and a bystander run. */
async function setUp(layout: Layout, links: (dir: string) => string[]) {
  env = await makeEnv();
  await env.repos.agents.add({
    name: 'planter',
    engine: 'command',
    argv: [process.execPath, PLANTER],
  });
  env.workflow('hostile', hostileWorkflow(links(env.dir), layout));
  const o = await env.open();
  const other = await bystander(o, env, layout);
  return { e: env, o, other };
}

function startHostile(o: Orchestrator, e: TestEnv): Promise<RunState> {
  return o.startRun({ workflow: 'hostile', workspace: e.workspace, spec: 's', actor: ALICE });
}

describe('a link planted by an agent in its workspace', () => {
  it('replacing the next step log: the step fails naming it, the target is not written', async () => {
    const { e, o, other } = await setUp('native', (dir) => [
      `.phasebridge/runs/{run}/logs/build-1.log ${path.join(dir, 'victim.txt')}`,
    ]);
    const outside = victim(e.dir, 'victim.txt');
    const run = await startHostile(o, e);
    const state = await o.waitUntilIdle(run.id);
    const log = path.join(e.workspace, '.phasebridge', 'runs', run.id, 'logs', 'build-1.log');
    expect(state.status).toBe('blocked');
    expect(state.steps[1]!.error).toBe(
      `cannot open log file ${log}: refusing to follow the symlink ${log} planted in the workspace`,
    );
    expectUntouched(outside);
    await expectStillWorks(o, other);
  });

  it('replacing the logs folder: the step fails naming it, nothing lands in the target', async () => {
    const { e, o, other } = await setUp('native', (dir) => [
      `.phasebridge/runs/{run}/logs ${path.join(dir, 'elsewhere')}`,
    ]);
    const elsewhere = path.join(e.dir, 'elsewhere');
    fs.mkdirSync(elsewhere);
    const run = await startHostile(o, e);
    const state = await o.waitUntilIdle(run.id);
    const logs = path.join(e.workspace, '.phasebridge', 'runs', run.id, 'logs');
    expect(state.status).toBe('blocked');
    expect(state.steps[1]!.error).toBe(
      `cannot open log file ${path.join(logs, 'build-1.log')}: refusing to follow the symlink ${logs} planted in the workspace`,
    );
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    await expectStillWorks(o, other);
  });

  it('replacing template.json: that run fails naming it, the target is not written', async () => {
    const { e, o, other } = await setUp('codemachine', (dir) => [
      `.codemachine/template.json ${path.join(dir, 'victim.json')}`,
    ]);
    const outside = victim(e.dir, 'victim.json');
    const run = await startHostile(o, e);
    await waitFor(async () => (await o.getRun(run.id)).steps[0]!.status === 'completed');
    const template = path.join(e.workspace, '.codemachine', 'template.json');
    await expect(
      o.command(run.id, 'cli:cancel', { type: 'cancel', reason: 'stop', actor: ALICE }),
    ).rejects.toMatchObject({
      code: 'CORRUPT_STATE',
      message: `refusing to follow the symlink ${template} planted in the workspace`,
    });
    expectUntouched(outside);
    await expectStillWorks(o, other);
  });

  it('replacing its directive file: the step fails naming it, the target is not obeyed', async () => {
    const { e, o, other } = await setUp('codemachine', (dir) => [
      `{directive} ${path.join(dir, 'victim.json')}`,
    ]);
    // Followed, this would end the run "successfully" and then be overwritten by the next reset.
    const outside = victim(e.dir, 'victim.json', '{"action":"stop"}\n');
    const run = await startHostile(o, e);
    const state = await o.waitUntilIdle(run.id);
    const directive = path.join(e.workspace, '.codemachine', 'memory', 'directive.json');
    expect(state.status).toBe('blocked');
    expect(state.steps[0]!.error).toBe(
      `invalid directive: refusing to follow the symlink ${directive} planted in the workspace`,
    );
    expectUntouched(outside);
    await expectStillWorks(o, other);
  });
});

describe('a link a cloned repository brings into the workspace', () => {
  it('as registry.db: starting a codemachine run there fails naming it, the target db is untouched', async () => {
    env = await makeEnv();
    const o = await env.open();
    const other = await bystander(o, env, 'codemachine');
    // A real database outside: followed, SQLite would add CodeMachine's tables to it.
    const outsideDb = path.join(env.dir, 'victim.db');
    const db = new Database(outsideDb);
    db.exec('CREATE TABLE secrets (v TEXT)');
    db.close();
    const outside = victim(env.dir, 'victim.db');
    const registry = path.join(env.workspace, '.codemachine', 'logs', 'registry.db');
    fs.mkdirSync(path.dirname(registry), { recursive: true });
    fs.symlinkSync(outsideDb, registry);
    // Refused at start, or (where a failing projection is only a warning) at the step that
    // registers its agent: either way only this run fails, naming the link.
    const outcome = await o
      .startRun({
        workflow: 'demo',
        workspace: env.workspace,
        spec: 's',
        actor: ALICE,
        layout: 'codemachine',
      })
      .then(
        (r) => o.waitUntilIdle(r.id),
        (err: Error) => err,
      );
    const said = outcome instanceof Error ? outcome.message : (outcome.blocked?.reason ?? '');
    expect(said).toContain(`refusing to follow the symlink ${registry} planted in the workspace`);
    expectUntouched(outside);
    expect(fs.readdirSync(env.dir).filter((f) => f.startsWith('victim.db'))).toEqual(['victim.db']);
    await expectStillWorks(o, other);
  });

  it('as prompt files: a workflow reading files outside the workspace is refused at start', async () => {
    env = await makeEnv();
    const o = await env.open();
    const other = await bystander(o, env, 'native');
    const secret = 'TOKEN=very-secret\n';
    fs.writeFileSync(path.join(env.dir, 'secret.md'), secret);
    fs.mkdirSync(path.join(env.workspace, 'prompts'));
    const linked = path.join(env.workspace, 'prompts', 'linked.md');
    fs.symlinkSync(path.join(env.dir, 'secret.md'), linked);
    env.workflow(
      'leaky',
      [
        'id: leaky',
        'steps:',
        '  - { id: a, agent: demo, promptFile: ../../secret.md }',
        '  - { id: b, agent: demo, promptFile: /etc/passwd }',
        '  - { id: c, agent: demo, promptFile: ../prompts/linked.md }',
        '',
      ].join('\n'),
    );
    const file = path.join(env.workspace, 'workflows', 'leaky.workflow.yaml');
    const start = o.startRun({
      workflow: 'leaky',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    const err = (await start.catch((caught: unknown) => caught)) as Error & { code: string };
    expect(err.code).toBe('INVALID_INPUT');
    expect(err.message.split('\n').slice(1)).toEqual([
      `${file}: steps[0].promptFile: must stay inside ${env.workspace} (got "../../secret.md")`,
      `${file}: steps[1].promptFile: must stay inside ${env.workspace} (got "/etc/passwd")`,
      `${file}: steps[2].promptFile: cannot read "../prompts/linked.md": refusing to follow the symlink ${linked} planted in the workspace`,
    ]);
    expect(err.message).not.toContain('very-secret');
    expect(await o.listRuns({ workspace: env.workspace })).toEqual([]);
    await expectStillWorks(o, other);
  });
});
