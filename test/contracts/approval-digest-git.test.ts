/**
 * Issue 36 in a git workspace, on Telegram (grammY against the fake Bot API): the digest covers
 * the files of the step's diff. A changed file after the checkpoint posted refuses the Approve,
 * naming the file, and the message is shown again with the changed-files list made anew.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TelegramDriver } from './drivers/telegram.ts';
import { gitWorld, HAS_GIT } from './git-world.ts';
import { runIdOf, type World } from './world.ts';

let w: World | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

describe.skipIf(!HAS_GIT)('approvals bound to a git diff (needs git on PATH)', () => {
  it('a file of the diff changed after posting is named, and the new list is shown', async () => {
    const d = await TelegramDriver.start();
    const world = await gitWorld([d], 'writer-agent.mjs');
    w = world;
    await d.sendCommand('alice', 'run write add files');
    const cp = await world.message(d, /Checkpoint build:1/);
    expect(cp.text).toMatch(/Content: 13 files, [0-9a-f]{6}/);
    expect(cp.text).toContain('README.md +1 −1');

    fs.writeFileSync(path.join(world.workspace, 'README.md'), 'first line\nchanged\nmore\n');
    const press = await d.press('bob', cp, 'Approve');
    expect(await d.answerTo(press)).toMatch(/^README\.md changed after this message was posted/);
    const shown = await world.settles(d, cp, (m) => m.text.includes('⚠'), 'the new version');
    expect(shown.text).toContain('README.md +2 −1');
    const state = await world.bridge.orchestrator.getRun(runIdOf(cp));
    expect(state.status).toBe('awaiting');

    const again = await d.press('bob', shown, 'Approve');
    expect(await d.answerTo(again)).toBe('Approved — 1 of 1 approval; the run moves on');
  });
});
