/**
 * Issue 36, "see before you press", through the whole bridge on Slack, Telegram and Discord (Bolt
 * with files.uploadV2, grammY's sendDocument and discord.js attachments against the fakes): a
 * checkpoint in a git workspace shows a Diff button; a viewer's press sends the step's diff as a
 * file, its caption listing the files with +/-, and changes nothing; `diff <run>` does the same;
 * a diff over 1 MB comes cut, and says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DiscordDriver } from './drivers/discord.ts';
import { SlackDriver } from './drivers/slack.ts';
import { TelegramDriver } from './drivers/telegram.ts';
import { gitWorld, HAS_GIT } from './git-world.ts';
import { checkpointButtonsOn, type PlatformDriver, until } from './platform-driver.ts';
import { runIdOf, type World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

/** The git world of the Diff stories: Carol may look (viewer) but not answer. */
async function diffWorld(drivers: PlatformDriver[], agent: string): Promise<World> {
  const world = await gitWorld(drivers, agent);
  w = world;
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
    const world = await diffWorld(drivers, 'writer-agent.mjs');
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
    const world = await diffWorld([telegram], 'big-writer-agent.mjs');
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
