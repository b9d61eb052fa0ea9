/**
 * The console's operator routes over HTTP against the real bridge (no browser): the run page's
 * answer refuses what the chat would refuse and changes nothing, access edits follow the CLI's
 * rules, the audit export defuses spreadsheet formulas, a plain form post from another site is
 * refused, and a log is followed from a byte offset.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type E2eBridge, startE2eBridge } from '../../e2e/bridge.ts';
import { signIn } from '../../support/console-login.ts';
import { slow } from '../../support/slowdown.ts';

let e2e: E2eBridge;
let cookie = '';
let csrf = '';
let runId = '';

async function get(path: string): Promise<Response> {
  return fetch(`${e2e.bridge.url}${path}`, { headers: { cookie, accept: 'text/html' } });
}

function postJson(path: string, body: Record<string, string>): Promise<Response> {
  return fetch(`${e2e.bridge.url}${path}`, {
    method: 'POST',
    headers: {
      cookie,
      'content-type': 'application/json',
      accept: 'application/json',
      'x-csrf-token': csrf,
      origin: e2e.bridge.url,
    },
    body: JSON.stringify(body),
  });
}

function postForm(path: string, fields: Record<string, string>, headers = {}): Promise<Response> {
  return fetch(`${e2e.bridge.url}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ csrf, ...fields }).toString(),
  });
}

async function waitFor<T>(read: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
}

beforeAll(async () => {
  e2e = await startE2eBridge();
  const login = await signIn(e2e.bridge.loginUrl);
  cookie = (login.headers.get('set-cookie') ?? '').split(';')[0]!;
  const page = await (await get('/admin/access')).text();
  csrf = /name="csrf" value="([^"]+)"/.exec(page)![1]!;
  expect((await postJson('/api/command', { text: 'run demo add a login page' })).status).toBe(200);
  const runs = await waitFor(
    () => e2e.bridge.orchestrator.listRuns({ status: 'awaiting' }),
    (r) => r.length === 1,
  );
  runId = runs[0]!.id;
}, slow(30_000));

afterAll(() => e2e?.dispose());

describe('run page answers', () => {
  it('refuses Request changes and Reject without a reason, and nothing happens', async () => {
    const auditBefore = await e2e.bridge.repos.audit.listRecent({ limit: 500 });
    for (const action of ['changes', 'reject']) {
      const res = await postJson('/api/run-action', { run: runId, action, reason: '  ' });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toMatch(/reason box/);
    }
    expect((await postJson('/api/run-action', { run: runId, action: 'merge' })).status).toBe(400);
    expect((await postJson('/api/run-action', { run: '../etc', action: 'approve' })).status).toBe(
      400,
    );
    const run = await e2e.bridge.orchestrator.getRun(runId);
    expect(run.status).toBe('awaiting');
    expect(run.checkpoint?.votes).toEqual([]);
    expect(await e2e.bridge.repos.audit.listRecent({ limit: 500 })).toEqual(auditBefore);
  });

  it('Request changes runs the step again with the reason, as it would in chat', async () => {
    const res = await postJson('/api/run-action', {
      run: runId,
      action: 'changes',
      reason: 'more',
    });
    expect(res.status).toBe(200);
    const { replies } = (await res.json()) as { replies: string[] };
    expect(replies.join('\n')).toMatch(/changes requested/);
    const run = await waitFor(
      () => e2e.bridge.orchestrator.getRun(runId),
      (r) => r.status === 'awaiting' && r.checkpoint?.id === 'plan:2',
    );
    expect(run.checkpoints.find((c) => c.id === 'plan:1')?.decision).toMatchObject({
      answer: 'loop',
      reason: 'more',
    });
  });

  it('a plain form post (no JavaScript) approves and goes back to the run page', async () => {
    const res = await postForm(
      '/api/run-action',
      { run: runId, action: 'approve', reason: 'fine' },
      { origin: 'null', 'sec-fetch-site': 'same-origin' },
    );
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe(`/runs/${runId}`);
    const run = await e2e.bridge.orchestrator.getRun(runId);
    expect(run.checkpoints.find((c) => c.id === 'plan:2')?.decision).toMatchObject({
      answer: 'approve',
      reason: 'fine',
    });
  });

  it('refuses a form post from another site even with a null Origin', async () => {
    const before = await e2e.bridge.repos.allowlist.list();
    const res = await postForm(
      '/api/access',
      { op: 'allow', user: 'telegram:9', role: 'admin' },
      { origin: 'null', 'sec-fetch-site': 'cross-site' },
    );
    expect(res.status).toBe(403);
    expect(await e2e.bridge.repos.allowlist.list()).toEqual(before);
  });
});

describe('access edits', () => {
  const flash = async () => {
    const html = await (await get('/admin/access')).text();
    return /<p role="status" class="card">(.*?)<\/p>/.exec(html)?.[1] ?? '';
  };

  it('refuses what the CLI refuses, changing nothing', async () => {
    const bindings = await e2e.bridge.repos.bindings.list();
    expect(
      (
        await postForm('/api/access', {
          op: 'bind',
          chat: 'telegram:-100555',
          workspace: '/nonexistent/ws',
        })
      ).status,
    ).toBe(303);
    expect(await flash()).toMatch(/Refused:.*is not a folder/);
    expect(
      (await postForm('/api/access', { op: 'allow', user: 'telegram:5', role: 'owner' })).status,
    ).toBe(303);
    expect(await flash()).toMatch(/Refused:/);
    expect(
      (
        await postForm('/api/access', {
          op: 'allow',
          user: 'telegram:5',
          role: 'viewer',
          chat: 'telegram:-100555',
        })
      ).status,
    ).toBe(303);
    expect(await flash()).toMatch(/Refused:.*is not bound/);
    expect((await postForm('/api/access', { op: 'unbind', chat: 'telegram:-100555' })).status).toBe(
      303,
    );
    expect(await flash()).toMatch(/Refused:/);
    expect(await e2e.bridge.repos.bindings.list()).toEqual(bindings);
    expect((await e2e.bridge.repos.allowlist.list()).some((r) => r.userId === '5')).toBe(false);
  });

  it('binds a chat, gives a role in it, and unbinds it, each audited as web:admin', async () => {
    const ws = e2e.bridge.workspace;
    await postForm('/api/access', {
      op: 'bind',
      chat: 'telegram:-100777',
      workspace: ws,
      workflow: '',
    });
    expect(await flash()).toBe(`telegram:-100777 is bound to ${ws}`);
    await postForm('/api/access', {
      op: 'allow',
      user: 'telegram:77',
      role: 'operator',
      chat: 'telegram:-100777',
    });
    expect(await flash()).toBe('telegram:77 is now operator in telegram:-100777');
    const page = await (await get('/admin/access')).text();
    expect(page).toMatch(
      /<code>telegram:77<\/code><\/td><td data-label="Role">operator<\/td><td data-label="Where">telegram:-100777/,
    );
    await postForm('/api/access', { op: 'unbind', chat: 'telegram:-100777' });
    expect(await e2e.bridge.repos.bindings.find('telegram:-100777')).toBeNull();
    const audit = await e2e.bridge.repos.audit.listRecent({ actor: 'web:admin', limit: 10 });
    expect(audit.map((a) => [a.action, a.target]).slice(0, 3)).toEqual([
      ['unbind', 'telegram:-100777'],
      ['allow', 'telegram:77'],
      ['bind', 'telegram:-100777'],
    ]);
  });
});

describe('audit export and log follow', () => {
  it('defuses spreadsheet formulas in the CSV and refuses a bad date filter', async () => {
    await e2e.bridge.repos.audit.record({
      actor: 'telegram:1',
      action: 'probe',
      target: '=HYPERLINK("http://x")',
      outcome: 'refused',
      detail: '@SUM(1)',
    });
    await e2e.bridge.repos.people.remember({ id: 'telegram:1', name: 'Alice' });
    const csv = await (await get('/admin/audit.csv?action=probe')).text();
    const [header, row] = csv.split('\r\n');
    expect(header).toBe('id,at,actor,action,target,chatRef,outcome,detail,actorName');
    // The id stays; the person is also named as chat names them (issue 29).
    expect(row).toMatch(/^"\d+","[^"]+","telegram:1",.*,"Alice"$/);
    const page = await (await get('/admin/audit?action=probe')).text();
    expect(page).toContain('<span title="telegram:1">Alice</span>');
    expect(row).toContain(`"'=HYPERLINK(""http://x"")"`);
    expect(row).toContain(`"'@SUM(1)"`);
    expect((await get('/admin/audit?since=yesterday')).status).toBe(400);
  });

  it('follows a log from a byte offset', async () => {
    const file = await e2e.bridge.orchestrator.logPath(runId, 'plan', 1);
    const size = fs.statSync(file).size;
    const res = await get(`/runs/${runId}/logs/plan?attempt=1&from=0`);
    const whole = (await res.json()) as { text: string; next: number; live: boolean };
    expect(whole.next).toBe(size);
    expect(whole.text).toBe(fs.readFileSync(file, 'utf8'));
    expect(whole.live).toBe(false);
    const tail = (await (await get(`/runs/${runId}/logs/plan?attempt=1&from=${size}`)).json()) as {
      text: string;
    };
    expect(tail.text).toBe('');
  });

  it("shows the prompt an attempt's agent was given, linked from the run page (issue 29)", async () => {
    // Earlier tests may have sent plan back: its latest attempt is linked.
    const n = (await e2e.bridge.orchestrator.getRun(runId)).steps[0]!.attempt;
    const runPage = await (await get(`/runs/${runId}`)).text();
    expect(runPage).toContain(`href="/runs/${runId}/prompts/plan?attempt=${n}">prompt</a>`);
    const res = await get(`/runs/${runId}/prompts/plan?attempt=1`);
    expect(res.status).toBe(200);
    const html = await res.text();
    const pre = /<pre id="prompt"[^>]*>([\s\S]*?)<\/pre>/.exec(html)?.[1];
    expect(pre).toContain('Plan the change described in the specification');
    expect((await get(`/runs/${runId}/prompts/plan?attempt=9`)).status).toBe(404);
    // The runs list names who started it (the index keeps the id for its filter).
    const list = await (await get('/runs')).text();
    expect(list).toContain('data-label="Started by">admin (web console)</td>');
  });
});
