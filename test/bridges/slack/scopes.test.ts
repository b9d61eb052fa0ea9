/**
 * The scopes table is complete: every Web API method and event the adapter uses is in it (or
 * needs no scope), read from the adapter's source and seen by the fake when the adapter runs.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { rich } from '../../../src/bridges/render-text.ts';
import { SLACK_SCOPES, SLACK_UNSCOPED_METHODS } from '../../../src/bridges/slack/scopes.ts';
import { type Harness, startHttpHarness } from './support.ts';

const SRC = path.resolve(import.meta.dirname, '../../../src/bridges/slack');
const tabled = new Set([...SLACK_SCOPES.flatMap((s) => s.methods), ...SLACK_UNSCOPED_METHODS]);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe('the Slack scopes table', () => {
  it('lists every method and event named in the adapter source', () => {
    const source = readdirSync(SRC)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(path.join(SRC, f), 'utf8'))
      .join('\n');
    const called = [...source.matchAll(/#call\('([A-Za-z.]+)'/g)].map((m) => m[1]!);
    expect(called.length).toBeGreaterThan(4);
    // files.uploadV2 is the WebClient's helper over the two external-upload methods.
    const methods = called.flatMap((m) =>
      m === 'files.uploadV2' ? ['files.getUploadURLExternal', 'files.completeUploadExternal'] : [m],
    );
    for (const m of methods) expect(tabled, m).toContain(m);
    // One `message` listener takes the message events of public and private channels alike.
    const events = [...source.matchAll(/app\.event\('([a-z_]+)'/g)].flatMap((m) =>
      m[1] === 'message' ? ['message.channels', 'message.groups'] : [m[1]],
    );
    expect(events).toEqual(SLACK_SCOPES.flatMap((s) => s.events));
  });

  it('lists every method the running adapter calls', async () => {
    h = await startHttpHarness();
    const chat = 'slack:T0FAKE01:C0OPS';
    const ref = await h.channel.send(chat, { text: rich('status') });
    await h.channel.edit(ref, { text: rich('status, edited') });
    await h.channel.sendFile(chat, { name: 'a.log', data: new TextEncoder().encode('x') });
    const seen = new Set(h.fake.calls.map((c) => c.method));
    expect(seen).toContain('files.completeUploadExternal');
    for (const m of seen) expect(tabled, m).toContain(m);
  });
});
