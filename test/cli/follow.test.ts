/**
 * `phasebridge follow WORKSPACE` through the real CLI: refused without a `.codexclaw/`, recorded
 * from the ledger's last complete line (a torn last line is not skipped over), `--stop` undoes it,
 * and `bind … --follow` does both at once.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-follow-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');

describe('phasebridge follow', () => {
  it('follows a codexclaw workspace from its ledger end, and stops', () => {
    mkdirSync(ws, { recursive: true });
    const refused = runCli(['follow', ws], home, root);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toContain(`${ws} has no .codexclaw/ folder to follow`);

    mkdirSync(join(ws, '.codexclaw', 'sessions'), { recursive: true });
    const full = `${JSON.stringify({ ts: 't', sessionId: 's', from: 'IDLE', to: 'I' })}\n`;
    writeFileSync(join(ws, '.codexclaw', 'ledger.jsonl'), full);
    appendFileSync(join(ws, '.codexclaw', 'ledger.jsonl'), '{"ts":"t2","sess');
    const follow = runCli(['follow', ws], home, root);
    expect(follow.code).toBe(0);
    expect(follow.out).toContain(
      `Following ${ws}'s codexclaw sessions: no chat is bound to it yet`,
    );
    expect(runCli(['follow', ws], home, root).out).toContain('Already following');
    const db = new Database(join(home, 'bridge.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT workspace, ledger_offset FROM followed_workspaces').all()).toEqual([
        { workspace: ws, ledger_offset: Buffer.byteLength(full) },
      ]);
    } finally {
      db.close();
    }
    expect(runCli(['follow', ws, '--stop'], home, root).out).toContain(
      `${ws} is no longer followed`,
    );
    expect(runCli(['follow', ws, '--stop'], home, root).code).not.toBe(0);
    const bind = runCli(['bind', 'telegram:-1001', '--workspace', ws, '--follow'], home, root);
    expect(bind.code).toBe(0);
    expect(bind.out).toContain(
      `Following ${ws}'s codexclaw sessions: announced in 1 bound chat(s)`,
    );
  });
});
