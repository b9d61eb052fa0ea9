/**
 * The runs pages' scripts (plain ES2020, no user text inside; they read the DOM and JSON). The
 * run page follows `/runs/<id>/events` and swaps its sections when the run changes (the answer
 * form only when another checkpoint opens, the Retry / Cancel form only when what it offers
 * changes, so a half-typed reason survives), and posts answers and controls
 * to `/api/run-action`; a running step's log page appends what the step writes; the runs list
 * refreshes its results (`?part=results`, JSON) when any run changes. Without JavaScript every page still works: the
 * answer form is a plain form post and the pages show the state when loaded.
 */

const COMMON = `
  const conn = document.getElementById('conn');
  const follow = (url, onChange) => {
    const es = new EventSource(url);
    let timer = 0;
    es.addEventListener('changed', () => { clearTimeout(timer); timer = setTimeout(onChange, 150); });
    // A change between the page's render and the stream's (re)opening sends no event: re-read.
    es.addEventListener('open', () => { conn.textContent = 'live'; onChange(); });
    es.addEventListener('error', () => {
      conn.textContent = es.readyState === EventSource.CLOSED ? 'disconnected: reload the page' : 'reconnecting…';
    });
    return es;
  };
`;

/** The run page's and the log page's script. */
export const RUN_PAGE_SCRIPT = `(() => {
  'use strict';${COMMON}
  const head = document.getElementById('run-id');
  const logEl = document.getElementById('log');
  const randomId = () => Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, '0')).join('');
  if (head) {
    const base = '/runs/' + encodeURIComponent(head.dataset.run);
    const csrf = document.querySelector('meta[name=csrf-token]').content;
    const result = document.getElementById('answer-result');
    const refresh = async () => {
      const res = await fetch(base + '?part=sections', { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (!res.ok) return;
      const s = await res.json();
      for (const k of ['summary', 'steps', 'history', 'ledger']) document.getElementById(k).innerHTML = s[k];
      document.getElementById('cp-info').innerHTML = s.checkpoint;
      const cp = document.getElementById('checkpoint');
      if (cp.dataset.key !== s.checkpointKey) {
        document.getElementById('cp-answer').innerHTML = s.answer;
        cp.dataset.key = s.checkpointKey;
        cp.classList.toggle('open', s.checkpointKey !== '');
        bindForm('answer');
      }
      const ctl = document.getElementById('controls');
      if (ctl.dataset.key !== s.controlsKey) {
        ctl.innerHTML = s.controls;
        ctl.dataset.key = s.controlsKey;
        bindForm('control');
      }
      head.dataset.status = s.status;
    };
    const bindForm = (id) => {
      const f = document.getElementById(id);
      if (!f) return;
      f.addEventListener('submit', async (e) => {
        e.preventDefault();
        const action = e.submitter ? e.submitter.value : 'approve';
        const reason = f.elements.reason.value.trim();
        if ((action === 'changes' || action === 'reject') && !reason) {
          result.textContent = 'Write in the reason box what should change (or why you reject) first.';
          f.elements.reason.focus();
          return;
        }
        const buttons = f.querySelectorAll('button');
        buttons.forEach((b) => { b.disabled = true; });
        try {
          const res = await fetch('/api/run-action', { method: 'POST', credentials: 'same-origin',
            headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, accept: 'application/json' },
            body: JSON.stringify({ run: head.dataset.run, action, reason, key: randomId() }) });
          const data = await res.json().catch(() => ({}));
          result.textContent = res.ok ? ((data.replies || []).join('\\n') || 'Sent.') : (data.error || ('Request failed (' + res.status + ')'));
          if (res.status === 401) location.reload();
        } catch (err) { result.textContent = 'The bridge cannot be reached.'; }
        buttons.forEach((b) => { b.disabled = false; });
        refresh();
      });
    };
    bindForm('answer');
    bindForm('control');
    follow(base + '/events', refresh);
  }
  if (logEl && logEl.dataset.live === '1') {
    let offset = Number(logEl.dataset.offset);
    const sep = location.search ? '&' : '?';
    const state = document.getElementById('log-state');
    const poll = async () => {
      const res = await fetch(location.pathname + location.search + sep + 'from=' + offset, { credentials: 'same-origin', headers: { accept: 'application/json' } });
      if (!res.ok) { state.textContent = 'Following the log stopped (' + res.status + '): reload the page.'; return; }
      const d = await res.json();
      if (d.text) { const empty = document.getElementById('log-empty'); if (empty) empty.remove(); logEl.append(document.createTextNode(d.text)); }
      offset = d.next;
      if (d.live || d.text) setTimeout(poll, 1000);
      else state.textContent = 'The step has finished; this log is complete.';
    };
    setTimeout(poll, 1000);
  }
})();`;

/** The runs list's script: refreshes the results (not the filter form) when a run changes. */
export const RUNS_LIST_SCRIPT = `(() => {
  'use strict';${COMMON}
  const refresh = async () => {
    const sep = location.search ? '&' : '?';
    const res = await fetch(location.pathname + location.search + sep + 'part=results', { credentials: 'same-origin', headers: { accept: 'application/json' } });
    if (!res.ok) return;
    const mine = document.getElementById('results');
    if (mine) mine.outerHTML = (await res.json()).html;
  };
  follow('/runs/events', refresh);
})();`;
