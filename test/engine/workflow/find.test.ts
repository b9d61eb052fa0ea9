import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';
import { findWorkflow } from '../../../src/engine/workflow/find.ts';
import { NotFoundError } from '../../../src/errors.ts';

describe('findWorkflow', () => {
  let workspace: string;
  let home: string;
  beforeEach(() => {
    workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-ws-'));
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-home-'));
  });
  afterEach(() => {
    fs.rmSync(workspace, { recursive: true, force: true });
    fs.rmSync(home, { recursive: true, force: true });
  });

  function write(dir: string, id: string, name: string) {
    fs.mkdirSync(path.join(dir, 'workflows'), { recursive: true });
    const text = `id: ${id}\nname: ${name}\nsteps: [{ id: s, agent: a, prompt: p }]\n`;
    fs.writeFileSync(path.join(dir, 'workflows', `${id}.workflow.yaml`), text);
  }

  it('prefers the workspace, then the bridge home, then the built-ins', async () => {
    const dirs = { searchDirs: [workspace, home] };
    expect(await findWorkflow('demo', dirs)).toBe(DEMO_WORKFLOW);
    write(home, 'demo', 'home demo');
    expect((await findWorkflow('demo', dirs)).name).toBe('home demo');
    write(workspace, 'demo', 'workspace demo');
    expect((await findWorkflow('demo', dirs)).name).toBe('workspace demo');
  });

  it('loads a path to a .yaml file directly', async () => {
    write(workspace, 'mine', 'mine');
    const file = path.join(workspace, 'workflows', 'mine.workflow.yaml');
    expect((await findWorkflow(file, { searchDirs: [] })).id).toBe('mine');
  });

  it('says where it looked, and never turns an id into a path outside the folders', async () => {
    await expect(findWorkflow('nope', { searchDirs: [workspace] })).rejects.toThrow(
      `no workflow "nope" (looked in ${path.join(workspace, 'workflows', 'nope.workflow.yaml')}, the built-ins)`,
    );
    await expect(
      findWorkflow('../../etc/passwd', { searchDirs: [workspace] }),
    ).rejects.toBeInstanceOf(NotFoundError);
  });
});
