/**
 * The console's one stylesheet (no framework). Light and dark themes with AA contrast, visible
 * keyboard focus, status shown as text in a bordered badge (colour only adds to it), tables that
 * become stacked lists below 720 px, and nothing wider than a 375 px phone.
 */
export const CSS = `
:root{--bg:#fafafa;--fg:#1d1f23;--muted:#595959;--line:#d0d0d0;--card:#fff;--accent:#1f4fbf;--bad:#a8231b;--good:#1b6e34;--warn:#7a5200;--add:#e6f4ea;--del:#fde8e7;font:15px/1.45 system-ui,sans-serif,"Noto Color Emoji","Segoe UI Emoji","Apple Color Emoji";color-scheme:light dark}
@media (prefers-color-scheme:dark){:root{--bg:#16181c;--fg:#e6e6e6;--muted:#a8adb3;--line:#3a3d43;--card:#1f2227;--accent:#8fb0ff;--bad:#ff9b91;--good:#8fe0a0;--warn:#f0c060;--add:#15301d;--del:#3a1a18}}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg)}
.skip{position:absolute;left:-999px}.skip:focus{left:1em;top:.5em;z-index:10;background:var(--card);padding:.3em .6em}
header{display:flex;flex-wrap:wrap;gap:.4em 1.2em;align-items:center;padding:.6em 1em;border-bottom:1px solid var(--line);background:var(--card)}
header b{margin-right:auto}header nav{display:flex;flex-wrap:wrap;gap:.2em 1em}header a{color:var(--fg);text-decoration:none;padding:.15em 0}header a[aria-current]{color:var(--accent);font-weight:600;text-decoration:underline}
main{max-width:82em;margin:0 auto;padding:1em}a{color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
h1{font-size:1.5em;margin:.3em 0 .5em;overflow-wrap:anywhere}h2{font-size:1.2em;margin:1.2em 0 .4em}
code,pre{font:13px/1.4 ui-monospace,monospace}pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.4em 0}code{overflow-wrap:anywhere}
.msg{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.6em .8em;margin:.5em 0;overflow-wrap:anywhere}
.msg .text{white-space:pre-wrap}.msg-user{border-style:dashed;color:var(--muted)}
.fields{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:.1em .8em;margin:.5em 0 0}.fields dt{font-weight:600}.fields dd{margin:0;overflow-wrap:anywhere}
.buttons{display:flex;gap:.5em;margin-top:.6em;flex-wrap:wrap}
.btn,button{font:inherit;padding:.4em .9em;border-radius:6px;border:1px solid var(--muted);background:var(--card);color:var(--fg);cursor:pointer;min-height:2.2em}
.btn-primary{background:var(--accent);border-color:var(--accent);color:var(--card)}.btn-danger{border-color:var(--bad);color:var(--bad)}
button:disabled{opacity:.6;cursor:wait}
form.say{display:flex;flex-wrap:wrap;gap:.5em;position:sticky;bottom:0;background:var(--bg);padding:.6em 0}
input[type=file]{font-size:.9em;max-width:100%;min-width:0}.msg .reply{margin-top:.5em;font-size:.9em;min-height:1.9em;padding:.2em .7em}
input[type=text],input[type=search],select,textarea{font:inherit;padding:.4em .55em;border:1px solid var(--muted);border-radius:6px;background:var(--card);color:var(--fg);max-width:100%}
form.say input[type=text]{flex:1 1 14em;min-width:0}textarea{width:100%;min-height:4.5em}
.prompt{display:flex;flex-wrap:wrap;gap:.5em;align-items:center;border:1px solid var(--accent);border-radius:8px;padding:.6em;margin:.5em 0;background:var(--card)}
#toasts{position:fixed;top:3.5em;right:1em;left:1em;margin-left:auto;display:flex;flex-direction:column;gap:.5em;max-width:24em;z-index:9}
.toast{background:var(--fg);color:var(--bg);padding:.6em .9em;border-radius:6px;cursor:pointer;white-space:pre-wrap}.toast.err{background:var(--bad);color:var(--card)}
#conn,.muted{color:var(--muted)}#conn{font-size:.9em}details summary{cursor:pointer}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:.7em .9em;margin:.7em 0}.card.open{border-color:var(--warn);border-width:2px}
.filters{display:flex;flex-wrap:wrap;gap:.5em .8em;align-items:end}.filters label{display:flex;flex-direction:column;font-size:.9em;gap:.15em;min-width:0}
.pager{display:flex;flex-wrap:wrap;gap:1em;align-items:center;margin:.6em 0}
.counts{display:flex;flex-wrap:wrap;gap:.4em 1.2em;list-style:none;padding:0;margin:.6em 0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35em .5em;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}td.num,.nowrap{white-space:nowrap}
td.clip{max-width:18em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.st{display:inline-block;justify-self:start;font-weight:600;border:1px solid currentColor;border-radius:4px;padding:0 .35em;font-size:.9em;white-space:nowrap}
.st-completed,.st-approved{color:var(--good)}.st-failed,.st-cancelled,.st-rejected{color:var(--bad)}.st-awaiting,.st-blocked,.st-running,.st-active,.st-queued,.st-changes{color:var(--warn)}
.phases{display:flex;flex-wrap:wrap;gap:.3em;list-style:none;padding:0;margin:.3em 0}.phases li{border:1px solid var(--line);border-radius:4px;padding:.1em .5em}.phases li[aria-current]{border:2px solid var(--accent);font-weight:700}
.diff .add{background:var(--add)}.diff .del{background:var(--del)}.diff .hunk{color:var(--accent)}
.snapshot{border-left:4px solid var(--muted)}
@media (max-width:720px){
main{padding:.6em}
table.list thead{position:absolute;left:-9999px}
table.list,table.list tbody,table.list tr,table.list td{display:block;width:100%}
table.list tr{border:1px solid var(--line);border-radius:8px;margin:.5em 0;padding:.3em .6em;background:var(--card)}
table.list td{display:grid;grid-template-columns:7.5em minmax(0,1fr);gap:.5em;border:0;padding:.15em 0;text-align:left;white-space:normal;overflow-wrap:anywhere;max-width:none}
table.list td::before{content:attr(data-label);font-weight:600;color:var(--muted)}
table.list td:empty{display:none}
}
`;
