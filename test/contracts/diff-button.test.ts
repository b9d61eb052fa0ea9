/**
 * Issue 36, "see before you press", through the whole bridge on Slack, Telegram and Discord (Bolt
 * with files.uploadV2, grammY's sendDocument and discord.js attachments against the fakes): a
 * checkpoint in a git workspace shows a Diff button; a viewer's press sends the step's diff as a
 * file, its caption listing the files with +/-, and changes nothing; `diff <run>` does the same;
 * a diff over 1 MB comes cut, and says so.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { checkpointButtonsOn, type PlatformDriver, until } from './platform-driver.ts';
import { runIdOf, World } from './world.ts';

const HAS_GIT = spawnSync('git', ['--version']).status === 0;
const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** A bridge on `drivers` whose workspace is a git repository; its `write` workflow runs `agent`. */
async function gitWorld(drivers: PlatformDriver[], agent: string): Promise<World> {
  const world = await World.create(drivers);
  w = world;
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: world.workspace, stdio: 'ignore' });
  git('init', '-q');
  fs.writeFileSync(path.join(world.workspace, 'README.md'), 'first line\nsecond line\n');
  fs.writeFileSync(path.join(world.workspace, '.gitignore'), '.phasebridge/\nworkflows/\n');
  git('add', '.');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'start');
  await world.bridge.repos.agents.add({
    name: 'writer',
    engine: 'command',
    argv: [process.execPath, fixture(agent)],
  });
  world.workflow(
    'write',
    'steps:\n  - id: build\n    agent: writer\n    prompt: Build it.\n    checkpoint:\n      when: after\n',
  );
  for (const d of drivers) await world.setRole(d, 'carol', 'viewer');
  return world;
}

async function filesOf(d: PlatformDriver) {
  return (await d.sentFiles?.()) ?? [];
}

describe.skipIf(!HAS_GIT)('the Diff button and the diff verb (needs git on PATH)', () => {
  it('a viewer presses Diff on every platform and gets the diff as a file; nothing changes', async () => {
    const drivers = [
      await SlackDriver.start(),
      await TelegramDriver.start(),
      await DiscordDriver.start(),
    ];
    const world = await gitWorld(drivers, 'writer-agent.mjs');
    await drivers[1]!.sendCommand('alice', 'run write add files');
    for (const d of drivers) {
      const cp = await world.message(d, /Checkpoint build:1/);
      expect(cp.buttons).toEqual([...checkpointButtonsOn(d), 'Diff']);
      expect(cp.text).toContain('README.md +1 −1');
      const press = await d.press('carol', cp, 'Diff');
      expect(await d.answerTo(press)).toBe('The diff of build, attempt 1, is attached.');
      await until(async () => (await filesOf(d)).length > 0, `${d.platform}: the diff file`);
      const [file] = await filesOf(d);
      expect(file!.name).toBe('build-1.diff');
      const text = file!.data.toString('utf8');
      expect(text).toContain('+changed line');
      expect(text).toContain('+++ b/src/file-12.ts');
      expect(file!.caption).toContain('Diff of build, attempt 1 — run');
      expect(file!.caption).toContain('README.md +1 −1');
      expect(file!.caption).not.toContain('Cut at');
      const state = await world.bridge.orchestrator.getRun(runIdOf(cp));
      expect(state.status).toBe('awaiting');
      expect(state.checkpoint!.votes).toEqual([]);
    }
    // Diff is a viewer's: a person without a role is refused.
    const telegram = drivers[1]!;
    await world.setRole(telegram, 'carol', null);
    const cp = await world.message(telegram, /Checkpoint build:1/);
    expect(await telegram.answerTo(await telegram.press('carol', cp, 'Diff'))).toBe(
      'You are not allowed to use diff here.',
    );
    expect(await filesOf(telegram)).toHaveLength(1);
  });

  it('`diff <run>` sends it too; a diff over 1 MB comes cut and says so', async () => {
    const telegram = await TelegramDriver.start();
    const world = await gitWorld([telegram], 'big-writer-agent.mjs');
    await telegram.sendCommand('alice', 'run write a big file');
    const cp = await world.message(telegram, /Checkpoint build:1/);
    await telegram.sendCommand('carol', `diff ${runIdOf(cp)}`);
    await until(async () => (await filesOf(telegram)).length > 0, 'the diff file');
    const [file] = await filesOf(telegram);
    expect(file!.data.length).toBeLessThanOrEqual(1024 * 1024 + 200);
    expect(file!.data.toString('utf8')).toMatch(/\[phasebridge\] diff cut at 1048576 bytes\n$/);
    expect(file!.caption).toContain('big.txt (new or binary)');
    expect(file!.caption).toContain('Cut at 1 MB');
  });
});
