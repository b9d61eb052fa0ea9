/**
 * The real bridge serving a Telegram team group through the fake Bot API, for the browser tests
 * of people who sign in through chat: each person has a role in the group and a private chat
 * where `/console` sends their one-time link. Public URL set, so links name it (as behind a
 * proxy); the tests open them against the bridge's own address.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type RunningBridge, startBridge } from '../../src/app/bridge.ts';
import { loadConfig } from '../../src/config.ts';
import type { Role } from '../../src/db/schema.ts';
import { createLogger } from '../../src/log.ts';
import { FakeTelegram, type FakeUser } from '../fakes/telegram.ts';
import { slow } from '../support/slowdown.ts';

/** Generous bound for anything to appear (not a timing assertion: it only avoids hanging). */
export const APPEAR_MS = slow(15_000);

/** Polls `probe` until it gives a value; throws naming `what` after twice APPEAR_MS. */
export async function until<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + APPEAR_MS * 2;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A running team bridge and what a test needs of it. */
export interface TeamBridge {
  readonly bridge: RunningBridge;
  readonly fake: FakeTelegram;
  /** The group every person is in. */
  readonly team: { id: number; type: 'supergroup'; title: string };
  /** A page of `browser` signed in as `who` through the link `/console` sends them privately. */
  signIn(browser: Browser, who: FakeUser, page?: Page): Promise<Page>;
  /** Stops the bridge and the fake, removes the files. */
  dispose(): Promise<void>;
}

/** Starts the bridge; `people` get their role in group `teamId`; `port` names the public URL. */
export async function startTeamBridge(o: {
  teamId: number;
  port: number;
  people: readonly (readonly [FakeUser, Role])[];
}): Promise<TeamBridge> {
  const team = { id: o.teamId, type: 'supergroup' as const, title: 'Team' };
  const publicUrl = `http://localhost:${o.port}`;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-e2e-team-'));
  const fake = await FakeTelegram.start();
  fake.addChat(team);
  for (const [who] of o.people) fake.addChat({ id: who.id, type: 'private' });
  const config = loadConfig({
    env: {
      PHASEBRIDGE_HOME: path.join(dir, 'home'),
      PHASEBRIDGE_PORT: '0',
      TELEGRAM_BOT_TOKEN: fake.token,
      TELEGRAM_API_ROOT: fake.apiRoot,
      PHASEBRIDGE_PUBLIC_URL: publicUrl,
    },
    cwd: dir,
  });
  const bridge = await startBridge(config, createLogger({ level: 'silent' }), {
    editIntervalMs: 20,
  });
  const binding = await bridge.repos.bindings.bind({
    chatRef: `telegram:${team.id}`,
    workspace: bridge.workspace,
  });
  for (const [who, role] of o.people) {
    await bridge.repos.allowlist.allow({ bindingId: binding.id }, 'telegram', String(who.id), role);
  }
  return {
    bridge,
    fake,
    team,
    async signIn(browser, who, given) {
      const before = fake.botMessages(who.id).length;
      fake.userSends({ chat: team, from: who, text: '/console' });
      const dm = await until('the link in a private chat', () => fake.botMessages(who.id)[before]);
      const link = /(http:\/\/\S+\?token=[A-Za-z0-9_%-]+)/.exec(dm.text ?? '')![1]!;
      const page =
        given ??
        (await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage());
      await page.goto(link.replace(publicUrl, bridge.url));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL(`${bridge.url}/`);
      return page;
    },
    async dispose() {
      await bridge.stop();
      await fake.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
