/**
 * Issue 29 black-box, as a user meets it: a real `phasebridge serve` process against the local
 * Telegram fake, a chat paired with the printed code. A guidance reply to the checkpoint is
 * acknowledged with where it goes, the Approve that follows takes it to the next step's agent
 * (`phasebridge logs <run> build --prompt`), and a reason given with `/changes` is in the re-run's
 * prompt (`logs … --prompt --attempt 2`).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeChat, FakeTelegram, type FakeUser } from '../fakes/telegram.ts';
import { waitUntil } from '../support/slowdown.ts';
import { runCliAsync } from './support.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const TEAM: FakeChat = { id: -1001, type: 'supergroup', title: 'Team' };
const ALICE: FakeUser = { id: 501, first_name: 'Alice', username: 'alice' };

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

describe('phasebridge serve: every word arrives', () => {
  it('a guidance reply then Approve reaches the next agent; a /changes reason is in the re-run prompt', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-serve-words-'));
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }));
    const home = path.join(dir, 'home');
    const ws = path.join(dir, 'ws');
    fs.mkdirSync(ws);
    const fake = await FakeTelegram.start();
    cleanups.push(() => fake.close());
    const env = {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: home,
      PHASEBRIDGE_WORKSPACE: ws,
      PHASEBRIDGE_PORT: '0',
      LOG_LEVEL: 'silent',
      DEMO_AGENT_BEHAVIOUR: 'sleep=20',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
    };
    const child = spawn(process.execPath, [BIN, 'serve'], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    cleanups.push(async () => {
      child.kill('SIGTERM');
      await exited;
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
    });
    const code = await waitUntil(() => /send "pair ([A-Z0-9]+)"/.exec(out)?.[1], {
      timeoutMs: 40_000,
      message: `no pairing code in:\n${out}`,
    });
    const said = (match: RegExp) =>
      fake.botMessages(TEAM.id).filter((m) => match.test(m.text ?? ''));
    const message = (match: RegExp) =>
      waitUntil(() => said(match).at(-1), { timeoutMs: 30_000, message: `no message ${match}` });

    fake.userSends({ chat: TEAM, from: ALICE, text: `/pair ${code}` });
    await message(/^Paired/);
    fake.userSends({ chat: TEAM, from: ALICE, text: '/run demo add login' });
    const plan = await message(/Checkpoint plan:1/);
    const runId = /— run (\S+)/.exec(plan.text ?? '')![1]!;

    fake.userReplies({
      chatId: TEAM.id,
      messageId: plan.message_id,
      from: ALICE,
      text: 'hash passwords with bcrypt',
    });
    await message(
      /^Noted: goes to build with the approval; it goes to plan, attempt 2 if changes are requested\.$/,
    );
    await waitUntil(
      () =>
        /Notes: 1 note from @alice will go/.test(
          fake.message(TEAM.id, plan.message_id)?.text ?? '',
        ),
      {
        timeoutMs: 30_000,
        message: 'the note on the checkpoint',
      },
    );
    fake.userPresses({
      chatId: TEAM.id,
      messageId: plan.message_id,
      from: ALICE,
      label: 'Approve',
    });
    await message(/Checkpoint review:1/);

    const cli = (args: string[]) => runCliAsync(args, home, dir, { PHASEBRIDGE_WORKSPACE: ws });
    const build = await cli(['logs', runId, 'build', '--prompt']);
    expect(build.code).toBe(0);
    expect(build.out).toMatch(
      /^Build the change following the approved plan\.[\s\S]*## Feedback from reviewers\n\n- @alice \(guidance, .+\): hash passwords with bcrypt\n/,
    );

    fake.userSends({ chat: TEAM, from: ALICE, text: `/changes ${runId} add a test for the form` });
    await message(/Checkpoint review:2/);
    const again = await cli(['logs', runId, 'build', '--prompt', '--attempt', '2']);
    expect(again.out).toMatch(
      /## Feedback from reviewers\n\n(- .+\n)*- @alice \(requested changes, .+\): add a test for the form\n/,
    );
  });
});
