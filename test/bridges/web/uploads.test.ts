/**
 * Files posted with a console command or reply (multipart/form-data) over real HTTP: they reach
 * the handler as InboundFiles whose bytes `downloadFile` reads, bounded, only while the event is
 * handled; an upload over every cap together is refused 413 with the limits in words; an upload
 * without the CSRF token or from another origin is refused 403 and reaches nobody; files on a
 * POST that takes none are refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Command, InboundEvent, Reply } from '../../../src/bridges/events.ts';
import { rich } from '../../../src/bridges/render-text.ts';
import { type Browser, login, startConsole, type TestConsole } from './support.ts';

let c: TestConsole | undefined;
afterEach(async () => {
  await c?.dispose();
  c = undefined;
});

const JPEG = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(300, 7)]);
const LIMITS = { maxBytes: 4096, maxFiles: 2 };

/** POSTs a multipart form as the console page does (CSRF field first, then the files). */
function upload(
  b: Browser,
  path: string,
  fields: Record<string, string>,
  files: { name: string; data: Buffer }[],
  o: { csrf?: string; origin?: string; accept?: string } = {},
): Promise<Response> {
  const form = new FormData();
  form.set('csrf', o.csrf ?? b.csrf);
  for (const [k, v] of Object.entries(fields)) form.set(k, v);
  for (const f of files) form.append('file', new Blob([new Uint8Array(f.data)]), f.name);
  return fetch(`${c!.base}${path}`, {
    method: 'POST',
    headers: {
      cookie: b.cookie,
      accept: o.accept ?? 'application/json',
      origin: o.origin ?? c!.base,
    },
    body: form,
    redirect: 'manual',
  });
}

describe('console uploads', () => {
  it('a command with files reaches the handler, readable while it is handled, then released', async () => {
    const read: Buffer[] = [];
    c = await startConsole({
      channel: { inputLimits: LIMITS },
      onEvent: async (e) => {
        for (const f of (e as Command).files ?? []) {
          read.push(Buffer.from(await c!.channel.downloadFile(f, LIMITS.maxBytes)));
        }
      },
    });
    const b = await login(c);
    const res = await upload(b, '/api/command', { text: 'run look at this', key: 'k-upload-1' }, [
      { name: 'screen.jpg', data: JPEG },
      { name: 'notes.txt', data: Buffer.from('hello') },
    ]);
    expect([res.status, await res.text()]).toEqual([200, '{"ok":true}']);
    const command = c.events[0] as Command;
    expect(command).toMatchObject({ kind: 'command', name: 'run', args: ['look', 'at', 'this'] });
    expect(command.idempotencyKey).toBe('web:cmd:k-upload-1');
    expect(command.files?.map((f) => [f.name, f.size])).toEqual([
      ['screen.jpg', JPEG.length],
      ['notes.txt', 5],
    ]);
    expect(read).toEqual([JPEG, Buffer.from('hello')]);
    // Bounded like every platform's download, and gone once the command was handled.
    await expect(c.channel.downloadFile(command.files![0]!, 10)).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    // The chat shows what was sent, with the file names.
    const page = await (await fetch(`${c.base}/`, { headers: { cookie: b.cookie } })).text();
    expect(page).toContain('› run look at this\n📎 screen.jpg, notes.txt');
  });

  it('the no-JavaScript form (CSRF as its first field) posts the files and goes back to the page', async () => {
    c = await startConsole({ channel: { inputLimits: LIMITS } });
    const b = await login(c);
    const res = await upload(
      b,
      '/api/command',
      { text: 'run look' },
      [{ name: 'a.jpg', data: JPEG }],
      {
        accept: 'text/html',
      },
    );
    expect([res.status, res.headers.get('location')]).toEqual([303, '/']);
    expect((c.events[0] as Command).files?.map((f) => f.name)).toEqual(['a.jpg']);
  });

  it('a file over the cap is announced with its whole size; reading it is refused', async () => {
    let failure: unknown;
    c = await startConsole({
      channel: { inputLimits: LIMITS },
      onEvent: async (e) => {
        const [f] = (e as Command).files ?? [];
        failure = await c!.channel.downloadFile(f!, LIMITS.maxBytes).catch((err: unknown) => err);
      },
    });
    const b = await login(c);
    const big = Buffer.alloc(6000, 1);
    const res = await upload(b, '/api/command', { text: 'run look' }, [
      { name: 'big.jpg', data: big },
    ]);
    expect(res.status).toBe(200);
    expect((c.events[0] as Command).files?.[0]?.size).toBe(6000);
    expect(failure).toMatchObject({
      code: 'INVALID_INPUT',
      message: 'it is over the limit of 4096 bytes',
    });
  });

  it('an upload over every cap together is refused 413 with the limits, and reaches nobody', async () => {
    c = await startConsole({ channel: { inputLimits: LIMITS } });
    const b = await login(c);
    const huge = Buffer.alloc(3 * 4096 + 70 * 1024, 1);
    const res = await upload(b, '/api/command', { text: 'run look' }, [
      { name: 'a.jpg', data: huge },
    ]);
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toBe(
      'Not sent: the upload is too large. Files are accepted up to 4 KB each, 2 a message, of these types: jpg, jpeg, png, gif, webp, pdf, txt, md, json, yaml, yml, csv, log, diff, patch.',
    );
    expect(c.events).toEqual([]);
  });

  it('an upload without the CSRF token, or from another origin, is refused 403 and reaches nobody', async () => {
    c = await startConsole({ channel: { inputLimits: LIMITS } });
    const b = await login(c);
    const file = [{ name: 'screen.jpg', data: JPEG }];
    const noToken = await upload(b, '/api/command', { text: 'run look' }, file, { csrf: 'wrong' });
    expect([noToken.status, await noToken.json()]).toEqual([
      403,
      { error: 'Missing or wrong CSRF token: reload the page.' },
    ]);
    const elsewhere = await upload(b, '/api/command', { text: 'run look' }, file, {
      origin: 'https://evil.example',
    });
    expect([elsewhere.status, await elsewhere.json()]).toEqual([
      403,
      { error: 'Cross-origin request refused.' },
    ]);
    expect(c.events).toEqual([]);
  });

  it('a reply to a held message carries its files; files with a reason or a press are refused', async () => {
    const seen: InboundEvent[] = [];
    let promptRef = '';
    c = await startConsole({
      channel: { inputLimits: LIMITS },
      onEvent: async (e) => {
        seen.push(e);
        if (e.kind === 'button') promptRef = await c!.channel.askForReason(e.interaction, 'Why?');
      },
    });
    const b = await login(c);
    const ref = await c.channel.send('web:console', {
      text: rich('Checkpoint plan:1'),
      buttons: [{ id: 'tok-reject', label: 'Reject' }],
    });
    const png = [{ name: 'mockup.png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47]) }];
    expect((await upload(b, '/api/reply', { ref, text: 'match this' }, png)).status).toBe(200);
    expect(seen[0] as Reply).toMatchObject({
      kind: 'reply',
      text: 'match this',
      replyToMessageRef: ref,
      files: [{ name: 'mockup.png', size: 4 }],
    });
    const press = await upload(b, '/api/press', { ref, token: 'tok-reject' }, png);
    expect([press.status, await press.json()]).toEqual([
      400,
      { error: 'Files go with a command or a reply to a run message, not with this.' },
    ]);
    expect(seen).toHaveLength(1);
    await fetch(`${c.base}/api/press`, {
      method: 'POST',
      headers: {
        cookie: b.cookie,
        'content-type': 'application/json',
        'x-csrf-token': b.csrf,
        origin: c.base,
      },
      body: JSON.stringify({ ref, token: 'tok-reject' }),
    });
    expect(promptRef).not.toBe('');
    const reason = await upload(b, '/api/reply', { ref: promptRef, text: 'why not' }, png);
    expect(reason.status).toBe(400);
    expect(seen.map((e) => e.kind)).toEqual(['reply', 'button']);
  });
});
