/**
 * Following a `.codexclaw/` that codexclaw itself writes (issue 13, item 5): `bind … --follow`
 * in chat, then rows appended to ledger.jsonl the way codexclaw appends them are announced in the
 * bound chat; a torn last line waits for its end; the offset survives a restart (no repeats);
 * codexclaw's files are never written (unknown fields stay as they are).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { holdsFor } from '../support/slowdown.ts';
import { ALICE, CAROL, TEAM_REF, until, World } from './support.ts';

let w: World;
beforeEach(async () => {
  w = await World.create();
});
afterEach(async () => {
  await w.cleanup();
});

/** A ledger row as codexclaw's orchestrate-apply appends it (plus a field we do not know). */
const row = (from: string, to: string, extra: Record<string, unknown> = {}) =>
  `${JSON.stringify({ ts: new Date().toISOString(), sessionId: 'cc-7f3a', from, to, reason: 'orchestrate', actor: 'agent', ...extra })}\n`;

const announced = () => w.messages(/^🔁 codexclaw session/);

describe('following a codexclaw workspace', () => {
  it('announces appended ledger rows in the bound chat, read-only', async () => {
    const dir = path.join(w.workspace, '.codexclaw');
    fs.mkdirSync(path.join(dir, 'sessions'), { recursive: true });
    const session = path.join(dir, 'sessions', 'cc-7f3a.json');
    const state = { phase: 'I', sessionId: 'cc-7f3a', slug: '', futureField: { kept: true } };
    fs.writeFileSync(session, `${JSON.stringify(state, null, 2)}\n`);
    const ledger = path.join(dir, 'ledger.jsonl');
    const written = [row('IDLE', 'I')];
    fs.writeFileSync(ledger, written[0]!);
    const append = (text: string) => {
      written.push(text);
      fs.appendFileSync(ledger, text);
    };

    const binding = (await w.b.repos.bindings.find(TEAM_REF))!;
    await w.b.repos.allowlist.allow(
      { bindingId: binding.id },
      'telegram',
      String(CAROL.id),
      'admin',
    );
    w.say(ALICE, `/bind ${w.workspace} --follow`);
    await w.message(/You are not allowed to use bind here/);
    w.say(CAROL, `/bind ${w.workspace} --follow`);
    const bound = await w.message(/^This chat now works in/);
    expect(bound.text).toContain('Following its codexclaw sessions (read-only)');

    // Rows already there when following began are history, not news.
    append(row('I', 'P', { evidence: 'asked 4 questions', hookVersion: 2 }));
    await until(() => announced().length === 1, 'the I → P row');
    expect(announced()[0]!.text).toBe(
      `🔁 codexclaw session cc-7f3a in ${w.workspace}: I → P · orchestrate by the agent · “asked 4 questions”`,
    );

    // A row still being written is not read until its newline lands.
    const next = row('P', 'A');
    append(next.slice(0, 20));
    await holdsFor(() => announced().length === 1, 1200, 'a half-written row was announced');
    append(next.slice(20));
    await until(() => announced().length === 2, 'the P → A row');
    expect(announced()[1]!.text).toContain(': P → A · orchestrate by the agent');

    // The offset is kept in bridge.db: a restart announces only what came while it was down.
    await w.stop();
    append(`not json\n${row('A', 'B', { override: true, actor: 'human' })}`);
    await w.start();
    await until(() => announced().length === 3, 'the A → B row after the restart');
    expect(announced()[2]!.text).toContain(': A → B · orchestrate by a human · override');
    await holdsFor(() => announced().length === 3, 1200, 'a row was announced twice');

    // Read-only: the session file is as codexclaw left it, unknown field and all.
    expect(JSON.parse(fs.readFileSync(session, 'utf8'))).toEqual(state);
    expect(fs.readFileSync(ledger, 'utf8')).toBe(written.join(''));
  });
});
