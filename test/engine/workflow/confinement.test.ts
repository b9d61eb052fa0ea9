/**
 * Workflow files come from workspaces (often cloned repositories) and the bridge home: their
 * prompt files must stay inside the workspace (or the home's `workflows/`), and are read without
 * following a planted link. Refusals are workflow problems naming the field.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findWorkflow, type SearchDir } from '../../../src/engine/workflow/find.ts';

let root: string;
let workspace: string;
let home: string;
let dirs: SearchDir[];
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-wf-confine-'));
  workspace = path.join(root, 'ws');
  home = path.join(root, 'home');
  fs.mkdirSync(path.join(workspace, 'workflows'), { recursive: true });
  fs.mkdirSync(path.join(home, 'workflows'), { recursive: true });
  fs.writeFileSync(path.join(root, 'secret.md'), 'TOKEN=very-secret\n');
  fs.writeFileSync(path.join(home, 'config.md'), 'bot token: very-secret\n');
  dirs = [
    { dir: workspace, root: workspace },
    { dir: home, root: path.join(home, 'workflows') },
  ];
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

function write(dir: string, id: string, promptFile: string): string {
  const file = path.join(dir, 'workflows', `${id}.workflow.yaml`);
  fs.writeFileSync(
    file,
    `id: ${id}\nsteps:\n  - { id: a, agent: demo, promptFile: "${promptFile}" }\n`,
  );
  return file;
}

async function problemOf(ref: string): Promise<string> {
  const err = (await findWorkflow(ref, { searchDirs: dirs }).catch((e: unknown) => e)) as Error;
  expect(err).toMatchObject({ code: 'INVALID_INPUT' });
  expect(err.message).not.toContain('very-secret');
  return err.message.split('\n').at(-1)!;
}

describe('prompt files of a workspace workflow', () => {
  it('may live anywhere in the workspace', async () => {
    fs.mkdirSync(path.join(workspace, 'prompts'));
    fs.writeFileSync(path.join(workspace, 'prompts', 'a.md'), 'Plan it.\n');
    write(workspace, 'ok', '../prompts/a.md');
    const wf = await findWorkflow('ok', { searchDirs: dirs });
    expect(wf.steps[0]!.prompt).toBe('Plan it.\n');
  });

  it('are refused outside it, relative or absolute', async () => {
    const file = write(workspace, 'up', '../../secret.md');
    expect(await problemOf('up')).toBe(
      `${file}: steps[0].promptFile: must stay inside ${workspace} (got "../../secret.md")`,
    );
    const abs = write(workspace, 'abs', path.join(root, 'secret.md'));
    expect(await problemOf('abs')).toBe(
      `${abs}: steps[0].promptFile: must stay inside ${workspace} (got "${path.join(root, 'secret.md')}")`,
    );
  });

  it('are refused when planted as a link, even one pointing inside', async () => {
    const link = path.join(workspace, 'workflows', 'p.md');
    fs.symlinkSync(path.join(root, 'secret.md'), link);
    const file = write(workspace, 'linked', 'p.md');
    expect(await problemOf('linked')).toBe(
      `${file}: steps[0].promptFile: cannot read "p.md": refusing to follow the symlink ${link} planted in the workspace`,
    );
  });

  it('a workflow file planted as a link is refused, naming it', async () => {
    const target = write(home, 'real', 'x.md');
    const link = path.join(workspace, 'workflows', 'planted.workflow.yaml');
    fs.symlinkSync(target, link);
    const err = await findWorkflow('planted', { searchDirs: dirs }).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'INVALID_INPUT',
      message: `refusing to follow the symlink ${link} planted in the workspace`,
    });
  });
});

describe('prompt files of a home workflow', () => {
  it("stay inside the home's workflows folder, never the rest of the home", async () => {
    fs.writeFileSync(path.join(home, 'workflows', 'p.md'), 'Home prompt.\n');
    write(home, 'fine', 'p.md');
    expect((await findWorkflow('fine', { searchDirs: dirs })).steps[0]!.prompt).toBe(
      'Home prompt.\n',
    );
    const file = write(home, 'peek', '../config.md');
    expect(await problemOf('peek')).toBe(
      `${file}: steps[0].promptFile: must stay inside ${path.join(home, 'workflows')} (got "../config.md")`,
    );
  });
});
