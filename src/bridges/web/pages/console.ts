/**
 * The console page: the chat's held messages, a command box with a file picker, and a small
 * inline script that follows /events (new and edited messages, private toasts, reason prompts)
 * and posts commands, button presses, reasons and replies to run messages (with files:
 * multipart/form-data) with the session's CSRF token. Without JavaScript the command box still
 * works as a plain form, files included.
 */
import { INPUT_EXTENSIONS } from '../../../chatops/input-files.ts';
import type { ChatAdapterState, WorkerState } from '../console-routes.ts';
import type { HeldMessage } from '../history.ts';
import { escapeHtml } from '../outbound.ts';
import type { PageParts } from './layout.ts';

/** One held message as an <article>; `html` is already escaped by the renderer. */
export function messageArticle(m: Pick<HeldMessage, 'ref' | 'n' | 'author' | 'html'>): string {
  return `<article class="msg msg-${m.author}" data-ref="${escapeHtml(m.ref)}" data-n="${m.n}">${m.html}</article>`;
}

/** The console page's parts (title, body, script). */
export function consolePage(input: {
  messages: readonly HeldMessage[];
  version: number;
  csrf: string;
  nonce: string;
  chats?: readonly ChatAdapterState[];
  workers?: readonly WorkerState[] | null;
}): PageParts {
  const list = input.messages.map(messageArticle).join('');
  const chats = input.chats ?? [];
  // Which chat platforms serve now: the console is where a new user looks first.
  const header =
    chats.length === 0
      ? '<p class="muted" id="chats">Chats: none configured (<code>phasebridge setup telegram</code>, slack or discord)</p>'
      : `<p class="muted" id="chats">Chats: ${chats
          .map((c) =>
            escapeHtml(c.ok ? `${c.name} (up)` : `${c.name} (not up: ${c.detail ?? 'starting'})`),
          )
          .join(', ')}</p>`;
  const workers = input.workers ?? null;
  // Which machines run agents (BullMQ): a step waiting for a label shows why here.
  const workerLine =
    workers === null
      ? ''
      : `<p class="muted" id="workers">Workers: ${
          workers.length === 0
            ? 'none registered (start one: <code>phasebridge worker</code>)'
            : workers.map((w) => escapeHtml(`${w.name} (${w.detail})`)).join(', ')
        }</p>`;
  const empty =
    input.messages.length === 0
      ? '<p class="muted" id="empty">No messages yet. Try <code>help</code> or <code>run demo add a login page</code>.</p>'
      : '';
  const body = `${header}${workerLine}${empty}<section id="messages" data-version="${input.version}" aria-live="polite">${list}</section>
<div id="prompts"></div><div id="toasts" role="status" aria-live="assertive"></div>
<form class="say" method="post" action="/api/command" enctype="multipart/form-data">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<input type="text" name="text" autocomplete="off" autofocus required maxlength="4000" placeholder="run demo add a login page" aria-label="Command">
<input type="file" name="file" multiple accept="${ACCEPT}" aria-label="Attach files">
<button type="submit" class="btn btn-primary">Send</button></form>`;
  return {
    title: 'Console',
    nonce: input.nonce,
    body,
    nav: 'console',
    csrf: input.csrf,
    script: CONSOLE_SCRIPT,
  };
}

/** What the file pickers offer: the extensions chatops accepts (it checks them again). */
const ACCEPT = Object.keys(INPUT_EXTENSIONS)
  .map((ext) => `.${ext}`)
  .join(',');

/** The page's script: plain ES2020, no user text inside (it reads everything from the DOM/SSE). */
const CONSOLE_SCRIPT = `(() => {
  'use strict';
  const csrf = document.querySelector('meta[name=csrf-token]').content;
  const log = document.getElementById('messages');
  const prompts = document.getElementById('prompts');
  const toasts = document.getElementById('toasts');
  const conn = document.getElementById('conn');
  const randomId = () => Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
  const tab = randomId();
  function toast(text, error) {
    const t = document.createElement('div');
    t.className = error ? 'toast err' : 'toast';
    t.textContent = text;
    t.addEventListener('click', () => t.remove());
    toasts.append(t);
    setTimeout(() => t.remove(), 8000);
  }
  // JSON, or multipart/form-data when files are chosen (the CSRF field goes before the files).
  async function post(path, body, picker) {
    const fields = Object.assign({ key: randomId(), tab }, body);
    const chosen = picker ? Array.from(picker.files) : [];
    const headers = { 'x-csrf-token': csrf, accept: 'application/json' };
    let payload;
    if (chosen.length === 0) {
      headers['content-type'] = 'application/json';
      payload = JSON.stringify(fields);
    } else {
      payload = new FormData();
      payload.set('csrf', csrf);
      for (const k of Object.keys(fields)) payload.set(k, fields[k]);
      for (const f of chosen) payload.append('file', f, f.name);
    }
    try {
      const res = await fetch(path, { method: 'POST', credentials: 'same-origin', headers, body: payload });
      if (res.ok) return true;
      const data = await res.json().catch(() => ({}));
      toast(data.error || ('Request failed (' + res.status + ')'), true);
      if (res.status === 401) location.reload();
    } catch (e) { toast('The bridge cannot be reached.', true); }
    return false;
  }
  function upsert(m) {
    const el = document.createElement('article');
    el.className = 'msg msg-' + m.author;
    el.dataset.ref = m.ref; el.dataset.n = String(m.n);
    el.innerHTML = m.html;
    const old = log.querySelector('[data-ref="' + CSS.escape(m.ref) + '"]');
    const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
    if (old) { old.replaceWith(el); }
    else {
      const after = Array.from(log.children).find((c) => Number(c.dataset.n) > m.n);
      log.insertBefore(el, after || null);
      const empty = document.getElementById('empty'); if (empty) empty.remove();
    }
    offerReply(el);
    if (nearBottom && !old) window.scrollTo(0, document.body.scrollHeight);
  }
  // A run's status or checkpoint message can be replied to: guidance for the run (other replies
  // would be chatter, which chatops ignores, so they get no Reply button).
  const RUN_MESSAGE = /^(?:\\S+\\s)?(?:Run \\S+ ·|Checkpoint \\S+ — run )/u;
  function offerReply(el) {
    if (!el.classList.contains('msg-bridge') || !el.querySelector('a[href^="/runs/"]')) return;
    if (!RUN_MESSAGE.test(el.textContent.trim())) return;
    const b = document.createElement('button');
    b.type = 'button'; b.className = 'btn reply'; b.textContent = 'Reply'; b.dataset.replyTo = el.dataset.ref;
    el.append(b);
  }
  function showReply(ref, about) {
    const open = prompts.querySelector('form.reply-form[data-ref="' + CSS.escape(ref) + '"]');
    if (open) { open.elements.text.focus(); return; }
    const f = document.createElement('form');
    f.className = 'prompt reply-form'; f.dataset.ref = ref;
    const label = document.createElement('label');
    label.textContent = 'Reply to: ' + about.slice(0, 80);
    const input = document.createElement('input'); input.type = 'text'; input.name = 'text'; input.required = true; input.maxLength = 4000;
    input.setAttribute('aria-label', 'Reply');
    const picker = document.createElement('input'); picker.type = 'file'; picker.multiple = true;
    picker.accept = say.elements.file.accept; picker.setAttribute('aria-label', 'Attach files to the reply');
    const send = document.createElement('button'); send.type = 'submit'; send.className = 'btn btn-primary'; send.textContent = 'Send reply';
    const cancel = document.createElement('button'); cancel.type = 'button'; cancel.className = 'btn'; cancel.textContent = 'Cancel';
    cancel.addEventListener('click', () => f.remove());
    f.append(label, input, picker, send, cancel);
    f.addEventListener('submit', async (e) => {
      e.preventDefault(); send.disabled = true;
      if (await post('/api/reply', { ref, text: input.value }, picker)) f.remove(); else send.disabled = false;
    });
    prompts.append(f); input.focus();
  }
  function showPrompt(p) {
    if (prompts.querySelector('[data-ref="' + CSS.escape(p.ref) + '"]')) return;
    const f = document.createElement('form');
    f.className = 'prompt'; f.dataset.ref = p.ref;
    const label = document.createElement('label'); label.textContent = p.text;
    const input = document.createElement('input'); input.type = 'text'; input.required = true; input.maxLength = 4000;
    const send = document.createElement('button'); send.type = 'submit'; send.className = 'btn btn-primary'; send.textContent = 'Send';
    f.append(label, input, send);
    f.addEventListener('submit', async (e) => {
      e.preventDefault(); send.disabled = true;
      if (await post('/api/reply', { ref: p.ref, text: input.value })) f.remove(); else send.disabled = false;
    });
    prompts.append(f); input.focus();
  }
  const es = new EventSource('/events?tab=' + tab + '&since=' + log.dataset.version);
  es.addEventListener('msg', (e) => upsert(JSON.parse(e.data)));
  es.addEventListener('toast', (e) => toast(JSON.parse(e.data).text, false));
  es.addEventListener('prompt', (e) => showPrompt(JSON.parse(e.data)));
  es.addEventListener('prompt-done', (e) => {
    const f = prompts.querySelector('[data-ref="' + CSS.escape(JSON.parse(e.data).ref) + '"]'); if (f) f.remove();
  });
  es.addEventListener('open', () => { conn.textContent = 'live'; });
  es.addEventListener('error', () => {
    conn.textContent = es.readyState === EventSource.CLOSED ? 'disconnected: reload the page' : 'reconnecting…';
  });
  const say = document.querySelector('form.say');
  for (const el of Array.from(log.children)) offerReply(el);
  log.addEventListener('click', async (e) => {
    const r = e.target.closest('button[data-reply-to]');
    if (r) { const el = r.closest('article'); showReply(r.dataset.replyTo, (el.firstElementChild || el).textContent.trim()); return; }
    const b = e.target.closest('button[data-token]');
    if (!b) return;
    b.disabled = true;
    await post('/api/press', { ref: b.closest('[data-ref]').dataset.ref, token: b.dataset.token });
    b.disabled = false;
  });
  say.addEventListener('submit', async (e) => {
    e.preventDefault();
    const input = say.elements.text;
    const picker = say.elements.file;
    if (await post('/api/command', { text: input.value }, picker)) { input.value = ''; picker.value = ''; }
  });
})();`;
