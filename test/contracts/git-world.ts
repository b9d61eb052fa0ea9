/**
 * A World whose workspace is a git repository with one commit, and a `write` workflow whose one
 * step (`build`, a checkpoint after it) runs a fixture agent: the setting of the stories about a
 * step's diff (approvals bound to it, the Diff button).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PlatformDriver } from './platform-driver.ts';
import { World } from './world.ts';

/** True when git is on PATH (the stories skip without it, saying so in their names). */
export const HAS_GIT = spawnSync('git', ['--version']).status === 0;

/** Starts a bridge on `drivers` in a fresh git workspace; `agent` is a file of ./fixtures/. */
export async function gitWorld(drivers: readonly PlatformDriver[], agent: string): Promise<World> {
  const world = await World.create(drivers);
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: world.workspace, stdio: 'ignore' });
    git('init', '-q');
    fs.writeFileSync(path.join(world.workspace, 'README.md'), 'first line\nsecond line\n');
    fs.writeFileSync(path.join(world.workspace, '.gitignore'), '.phasebridge/\nworkflows/\n');
    git('add', '.');
    git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
    const fixture = fileURLToPath(new URL(`./fixtures/${agent}`, import.meta.url));
    await world.bridge.repos.agents.add({
      name: 'writer',
      engine: 'command',
      argv: [process.execPath, fixture],
    });
    world.workflow(
      'write',
      'steps:\n  - id: build\n    agent: writer\n    prompt: Build it.\n    checkpoint:\n      when: after\n',
    );
    return world;
  } catch (err) {
    await world.cleanup();
    throw err;
  }
}
