/** The web console over real HTTP: login, sessions, CSRF, commands, live messages, buttons. */
import { afterEach, describe, expect, it } from 'vitest';
import type { ButtonPress, Command, Reply } from '../../../src/bridges/events.ts';
import { bold, rich } from '../../../src/bridges/render-text.ts';
import { signIn } from '../../support/console-login.ts';
import {
  type Browser,
  EventStream,
  login,
  post,
  startConsole,
  type TestConsole,
} from './support.ts';

let c: TestConsole | undefined;
const streams: EventStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  await c?.dispose();
  c = undefined;
});

async function events(b: Browser, query = '', headers: Record<string, string> = {}) {
  const s = await EventStream.open(c!, b, query, headers);
  streams.push(s);
  return s;
}

describe('login and sessions', () => {
  it('the login link sets an HttpOnly SameSite=Strict cookie and redirects to the console', async () => {
    c = await startConsole();
    const res = await signIn(await c.channel.loginUrl(c.base));
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/');
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^pb_session=[A-Za-z0-9_-]{43};/);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    const page = await fetch(`${c.base}/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'nonce-");
    expect(await page.text()).toContain('name="csrf-token"');
  });

  it('a login token works once', async () => {
    c = await startConsole();
    const url = await c.channel.loginUrl(c.base);
    expect((await signIn(url)).status).toBe(303);
    const again = await signIn(url);
    expect(again.status).toBe(401);
    expect(again.headers.get('set-cookie')).toBeNull();
    expect((await signIn(`${c.base}/?token=made-up`)).status).toBe(401);
  });

  it('a GET of the link (a chat link preview) shows a Sign in page and uses nothing up', async () => {
    c = await startConsole();
    const url = await c.channel.loginUrl(c.base);
    for (let i = 0; i < 3; i++) {
      const preview = await fetch(url, { redirect: 'manual' });
      expect(preview.status).toBe(200);
      expect(preview.headers.get('set-cookie')).toBeNull();
      const html = await preview.text();
      expect(html).toContain('<form method="post" action="login">');
      expect(html).toContain('id="sign-in"');
    }
    // The link still works, once, from the page's POST.
    const token = new URL(url).searchParams.get('token')!;
    const post = (body: URLSearchParams) =>
      fetch(`${c!.base}/login`, { method: 'POST', redirect: 'manual', body });
    const ok = await post(new URLSearchParams({ token }));
    expect(ok.status).toBe(303);
    expect(ok.headers.get('set-cookie')).toMatch(/^pb_session=/);
    expect((await post(new URLSearchParams({ token }))).status).toBe(401);
    // A cross-site POST is refused before the token is looked at.
    const url2 = await c.channel.loginUrl(c.base);
    const cross = await fetch(`${c.base}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: 'https://evil.example' },
      body: new URLSearchParams({ token: new URL(url2).searchParams.get('token')! }),
    });
    expect(cross.status).toBe(403);
    expect((await signIn(url2)).status).toBe(303);
  });

  it('every console request without the session is refused with 401', async () => {
    c = await startConsole();
    for (const path of ['/', '/events', '/runs', '/files/x', '/nothing-here']) {
      expect((await fetch(`${c.base}${path}`)).status, path).toBe(401);
    }
    const forged = await fetch(`${c.base}/`, { headers: { cookie: 'pb_session=forged' } });
    expect(forged.status).toBe(401);
    const res = await fetch(`${c.base}/api/command`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'run demo x' }),
    });
    expect(res.status).toBe(401);
    expect(c.events).toEqual([]);
  });

  it('a POST without the CSRF token, or from another origin, is refused with 403', async () => {
    c = await startConsole();
    const b = await login(c);
    const noToken = await post(c, { ...b, csrf: '' }, '/api/command', { text: 'status' });
    expect(noToken.status).toBe(403);
    const wrong = await post(c, { ...b, csrf: 'x'.repeat(43) }, '/api/command', { text: 'status' });
    expect(wrong.status).toBe(403);
    const evil = await post(
      c,
      b,
      '/api/command',
      { text: 'status' },
      { origin: 'http://evil.test' },
    );
    expect(evil.status).toBe(403);
    expect(c.events).toEqual([]);
  });
});

describe('commands', () => {
  it('typed text becomes a Command from web:admin, with or without the slash', async () => {
    c = await startConsole();
    const b = await login(c);
    expect((await post(c, b, '/api/command', { text: '/run demo add login' })).status).toBe(200);
    expect((await post(c, b, '/api/command', { text: '  Run demo add login ' })).status).toBe(200);
    const [a, d] = c.events as Command[];
    for (const cmd of [a!, d!]) {
      expect(cmd).toMatchObject({
        kind: 'command',
        name: 'run',
        args: ['demo', 'add', 'login'],
        chatRef: 'web:console',
        user: { platform: 'web', id: 'admin' },
      });
    }
    expect(a!.rawText).toBe('/run demo add login');
    expect(a!.idempotencyKey).not.toBe(d!.idempotencyKey);
  });

  it('a repeated post with the same key carries the same idempotency key', async () => {
    c = await startConsole();
    const b = await login(c);
    await post(c, b, '/api/command', { text: 'status', key: 'k-12345678' });
    await post(c, b, '/api/command', { text: 'status', key: 'k-12345678' });
    expect(c.events.map((e) => e.idempotencyKey)).toEqual([
      'web:cmd:k-12345678',
      'web:cmd:k-12345678',
    ]);
  });

  it('the no-JavaScript form posts the command and goes back to the page', async () => {
    c = await startConsole();
    const b = await login(c);
    const res = await fetch(`${c.base}/api/command`, {
      method: 'POST',
      redirect: 'manual',
      headers: {
        cookie: b.cookie,
        origin: c.base,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ csrf: b.csrf, text: 'help run' }).toString(),
    });
    expect(res.status).toBe(303);
    expect(c.events[0]).toMatchObject({ kind: 'command', name: 'help', args: ['run'] });
  });

  it('what the user typed is shown in the chat, escaped', async () => {
    c = await startConsole();
    const b = await login(c);
    const stream = await events(b);
    await post(c, b, '/api/command', { text: 'run demo <img src=x onerror=alert(1)>' });
    const echo = (await stream.next('msg')).data as { html: string; author: string };
    expect(echo.author).toBe('user');
    expect(echo.html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(echo.html).not.toContain('<img');
  });

  it('a handler failure is answered 500 with no internal detail', async () => {
    c = await startConsole({
      onEvent: async () => {
        throw new Error('secret internals');
      },
    });
    const b = await login(c);
    const res = await post(c, b, '/api/command', { text: 'status' });
    expect(res.status).toBe(500);
    expect(JSON.stringify(await res.json())).not.toContain('secret internals');
  });
});

describe('live messages', () => {
  it('send then edit push two events for the same message; the edit replaces it', async () => {
    c = await startConsole();
    const b = await login(c);
    const stream = await events(b);
    const ref = await c.channel.send('web:console', {
      text: rich('Run ', bold('add-login'), ' started'),
    });
    await c.channel.edit(ref, {
      text: rich('Run add-login: plan done'),
      fields: [{ label: 'Step', value: 'build <2/3>' }],
    });
    const first = await stream.next('msg');
    const second = await stream.next('msg');
    const d1 = first.data as { ref: string; html: string };
    const d2 = second.data as { ref: string; html: string };
    expect(d1.ref).toBe(ref);
    expect(d2.ref).toBe(ref);
    expect(d1.html).toContain('<strong>add-login</strong>');
    expect(d2.html).toContain('plan done');
    expect(d2.html).toContain('build &lt;2/3&gt;');
    expect(Number(second.id)).toBeGreaterThan(Number(first.id));
    // A page opened now shows the edited message once.
    const page = await (await fetch(`${c.base}/`, { headers: { cookie: b.cookie } })).text();
    expect(page.split('plan done').length).toBe(2);
    expect(page).not.toContain('started');
  });

  it('a reconnecting page gets only what changed after the last event it saw', async () => {
    c = await startConsole();
    const b = await login(c);
    const first = await c.channel.send('web:console', { text: rich('one') });
    await c.channel.send('web:console', { text: rich('two') });
    const stream = await events(b, '', { 'last-event-id': '1' });
    const replayed = (await stream.next('msg')).data as { ref: string; html: string };
    expect(replayed.html).toContain('two');
    await c.channel.edit(first, { text: rich('one, edited') });
    expect(((await stream.next('msg')).data as { ref: string }).ref).toBe(first);
  });

  it('editing a message the console does not hold is NOT_FOUND', async () => {
    c = await startConsole();
    await expect(c.channel.edit('web:console#old.7', { text: rich('x') })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await expect(c.channel.send('web:other', { text: rich('x') })).rejects.toMatchObject({
      code: 'INVALID_INPUT',
    });
  });

  it('a sent file is offered as a download to logged-in pages only', async () => {
    c = await startConsole();
    const b = await login(c);
    const stream = await events(b);
    await c.channel.sendFile('web:console', {
      name: 'plan log.txt',
      data: new TextEncoder().encode('hello log'),
    });
    const { html } = (await stream.next('msg')).data as { html: string };
    const href = /href="([^"]+)"/.exec(html)?.[1] ?? '';
    expect(href).toMatch(/^\/files\//);
    const file = await fetch(`${c.base}${href}`, { headers: { cookie: b.cookie } });
    expect(file.headers.get('content-disposition')).toContain("filename*=UTF-8''plan%20log.txt");
    expect(await file.text()).toBe('hello log');
    expect((await fetch(`${c.base}${href}`)).status).toBe(401);
  });
});

describe('buttons, answers and reasons', () => {
  it('a press emits a ButtonPress and a private answer reaches the pressing page only', async () => {
    c = await startConsole({
      onEvent: async (e) => {
        if (e.kind === 'button') {
          await c!.channel.answer(e.interaction, 'approved — 1 of 2 approvals', { private: true });
        }
      },
    });
    const alice = await login(c);
    const other = await login(c);
    const mine = await events(alice, '?tab=tab-alice');
    const theirs = await events(other, '?tab=tab-other');
    const ref = await c.channel.send('web:console', {
      text: rich('Checkpoint after plan'),
      buttons: [
        { id: 'tok-approve', label: 'Approve', style: 'primary' },
        { id: 'tok-reject', label: 'Reject', style: 'danger' },
      ],
    });
    const res = await post(c, alice, '/api/press', {
      ref,
      token: 'tok-approve',
      tab: 'tab-alice',
      key: 'press-0001',
    });
    expect(res.status).toBe(200);
    const press = c.events[0] as ButtonPress;
    expect(press).toMatchObject({
      kind: 'button',
      token: 'tok-approve',
      messageRef: ref,
      chatRef: 'web:console',
      user: { platform: 'web', id: 'admin' },
      idempotencyKey: 'web:press:press-0001',
    });
    expect((await mine.next('toast')).data).toEqual({ text: 'approved — 1 of 2 approvals' });
    // The other session saw the message but never the private toast.
    await theirs.next('msg');
    expect(theirs.pending().some((m) => m.event === 'toast')).toBe(false);
  });

  it('a press on a button the message no longer has is refused and emits nothing', async () => {
    c = await startConsole();
    const b = await login(c);
    const ref = await c.channel.send('web:console', {
      text: rich('Checkpoint'),
      buttons: [{ id: 'tok-1', label: 'Approve' }],
    });
    await c.channel.edit(ref, { text: rich('Approved by admin') });
    expect((await post(c, b, '/api/press', { ref, token: 'tok-1' })).status).toBe(409);
    expect((await post(c, b, '/api/press', { ref, token: 'forged' })).status).toBe(409);
    expect(c.events).toEqual([]);
  });

  it('askForReason shows a prompt on the pressing page whose answer is a Reply', async () => {
    let promptRef = '';
    c = await startConsole({
      onEvent: async (e) => {
        if (e.kind === 'button')
          promptRef = await c!.channel.askForReason(e.interaction, 'Why reject?');
      },
    });
    const b = await login(c);
    const stream = await events(b, '?tab=tab-1');
    const ref = await c.channel.send('web:console', {
      text: rich('Checkpoint'),
      buttons: [{ id: 'tok-reject', label: 'Reject' }],
    });
    await post(c, b, '/api/press', { ref, token: 'tok-reject', tab: 'tab-1' });
    const prompt = (await stream.next('prompt')).data as { ref: string; text: string };
    expect(prompt).toEqual({ ref: promptRef, text: 'Why reject?' });
    expect(
      (await post(c, b, '/api/reply', { ref: prompt.ref, text: 'tests are red' })).status,
    ).toBe(200);
    const reply = c.events[1] as Reply;
    expect(reply).toMatchObject({
      kind: 'reply',
      text: 'tests are red',
      replyToMessageRef: promptRef,
      user: { platform: 'web', id: 'admin' },
    });
    expect((await stream.next('prompt-done')).data).toEqual({ ref: promptRef });
    // Answered once: the prompt is closed.
    expect((await post(c, b, '/api/reply', { ref: prompt.ref, text: 'again' })).status).toBe(404);
  });

  it('a public answer is posted in the chat', async () => {
    c = await startConsole({
      onEvent: async (e) => {
        if (e.kind === 'button')
          await c!.channel.answer(e.interaction, 'Run cancelled', { private: false });
      },
    });
    const b = await login(c);
    const stream = await events(b);
    const ref = await c.channel.send('web:console', {
      text: rich('x'),
      buttons: [{ id: 't', label: 'Cancel' }],
    });
    await stream.next('msg');
    await post(c, b, '/api/press', { ref, token: 't' });
    expect(((await stream.next('msg')).data as { html: string }).html).toContain('Run cancelled');
  });
});

describe('stopping', () => {
  it('after stop, posts are refused with 503 and the server closes with a page still open', async () => {
    c = await startConsole();
    const b = await login(c);
    await events(b);
    expect(c.channel.running).toBe(true);
    await c.channel.stop();
    expect(c.channel.running).toBe(false);
    expect((await post(c, b, '/api/command', { text: 'status' })).status).toBe(503);
    expect((await EventStream.open(c, b)).status).toBe(503);
    await c.server.close();
    expect(c.events).toEqual([]);
  });
});
