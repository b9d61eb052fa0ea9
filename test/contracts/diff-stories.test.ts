/**
 * Issue 38, through the whole bridge on Telegram (grammY against the fake Bot API): a workspace
 * whose .gitignore lists the run folders still gets the step's changed files in its checkpoint
 * message and a diff on the console's page; a git that cannot make the diff says why in the
 * checkpoint ("no diff: …") and once in the step's log.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { TelegramDriver } from './drivers/telegram.ts';
import { runIdOf, World } from './world.ts';

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
const WRITER = fileURLToPath(new URL('./fixtures/writer-agent.mjs', import.meta.url));
const WRITE = `steps:
  - id: build
    agent: writer
    prompt: Build it.
    checkpoint:
      when: after
`;

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** A bridge on Telegram whose workspace is a repository with README.md and `ignore`. */
async function gitWorld(ignore: string): Promise<{ d: TelegramDriver; world: World }> {
  const d = await TelegramDriver.start();
  const world = await World.create([d]);
  w = world;
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: world.workspace, stdio: 'ignore' });
  git('init', '-q');
  fs.writeFileSync(path.join(world.workspace, 'README.md'), 'first line\nsecond line\n');
  fs.writeFileSync(path.join(world.workspace, '.gitignore'), ignore);
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
  await world.bridge.repos.agents.add({
    name: 'writer',
    engine: 'command',
    argv: [process.execPath, WRITER],
  });
  world.workflow('write', WRITE);
  return { d, world };
}

describe.skipIf(!HAS_GIT)('step diffs on Telegram (needs git on PATH)', () => {
  it('a .gitignore listing the run folders still shows the changed files and the diff', async () => {
    const ignore = '.phasebridge/\n.codemachine/\n.codexclaw/\n.flow/\n.coordinator/\nworkflows/\n';
    const { d, world } = await gitWorld(ignore);
    await d.sendCommand('alice', 'run write add files');
    const cp = await world.message(d, /Checkpoint build:1/);
    expect(cp.text).toMatch(/Changed by build \(vs [0-9a-f]{7}\):/);
    expect(cp.text).toContain('README.md +1 −1');
    expect(cp.text).toContain('and 3 more');
    expect(cp.text).not.toContain('.phasebridge');
    expect(cp.text).not.toContain('no diff');
    const log = await world.bridge.orchestrator.logPath(runIdOf(cp), 'build');
    const diff = fs.readFileSync(log.replace(/\.log$/, '.diff'), 'utf8');
    expect(diff).toContain('+changed line');
    expect(diff).toContain('+++ b/src/file-12.ts');
    expect(diff).not.toContain('.phasebridge');
  });

  it('a diff git cannot make is named in the checkpoint and once in the log', async () => {
    const { d, world } = await gitWorld('.phasebridge/\nworkflows/\n');
    fs.writeFileSync(path.join(world.workspace, '.git', 'index'), 'not an index');
    await d.sendCommand('alice', 'run write add files');
    const cp = await world.message(d, /Checkpoint build:1/);
    expect(cp.text).toMatch(/no diff: git add: .*index/);
    const log = fs.readFileSync(
      await world.bridge.orchestrator.logPath(runIdOf(cp), 'build'),
      'utf8',
    );
    const notes = log.split('\n').filter((l) => /\[phasebridge\].*no diff/.test(l));
    expect(notes).toHaveLength(1);
  });
});
