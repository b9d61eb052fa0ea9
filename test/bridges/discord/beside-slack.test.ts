/**
 * Discord beside Slack in one process. @slack/bolt's Socket Mode loads undici 7, which installs
 * its Agent as the process-wide dispatcher that discord.js's undici 6 also reads (both use
 * `Symbol.for('undici.globalDispatcher.1')`); discord.js's multipart uploads then failed with
 * "action is not a function" (discord.js issues #10946, #11525). The adapter gives discord.js a
 * dispatcher of its own undici, so the order the SDKs load in does not matter.
 */
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { code, rich } from '../../../src/bridges/render-text.ts';
import { type Harness, startHarness } from './support.ts';

const LEGACY_DISPATCHER = Symbol.for('undici.globalDispatcher.1');
type Globals = Record<symbol, unknown>;

/** The undici Bolt's Socket Mode resolves (7), as Bolt's import loads it. */
function slacksUndici(): { Agent: new () => unknown } {
  const bolt = createRequire(import.meta.url).resolve('@slack/bolt');
  const socketMode = createRequire(bolt).resolve('@slack/socket-mode');
  return createRequire(socketMode)('undici');
}

let h: Harness | undefined;
let saved: unknown;
afterEach(async () => {
  await h?.close();
  h = undefined;
  (globalThis as Globals)[LEGACY_DISPATCHER] = saved;
});

describe('Discord in a process that also runs Slack', () => {
  it("uploads a file when Slack's undici holds the process-wide dispatcher", async () => {
    saved = (globalThis as Globals)[LEGACY_DISPATCHER];
    // What undici 7 does when it loads first (lib/global.js), made explicit: in a process that
    // already loaded Discord's undici, Bolt's import alone would leave the older one in place.
    (globalThis as Globals)[LEGACY_DISPATCHER] = new (slacksUndici().Agent)();
    h = await startHarness();
    const ref = await h.channel.sendFile(h.chatRef, {
      name: 'step.log',
      data: new TextEncoder().encode('line 1\n'),
      caption: rich('Log of ', code('build')),
    });
    expect(ref).toMatch(/^discord:/);
    const [post] = h.fake.okCalls('POST', /\/messages$/);
    expect(post!.files).toEqual([{ name: 'step.log', size: 7, data: Buffer.from('line 1\n') }]);
  });
});
