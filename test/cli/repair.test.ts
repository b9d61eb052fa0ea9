/**
 * Damaged run files through the real CLI: status reads the ledger (a hand-edited run.json does
 * not count), a garbage registry.db does not fail a committed command, and `repair` says what is
 * wrong, keeps a backup and the ledger's longest valid prefix, or refuses.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-repair-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');
const cli = (...args: string[]) => {
  const res = runCli(args, home, root);
  // The bin may rebuild its bundle first when sources changed; that line is not the command's.
  const err = res.err.replace(/^phasebridge: building dist\/.*\n/gm, '');
  return { ...res, err };
};

describe('damaged run files from the CLI', () => {
  it('status reads the ledger; a failing projection warns; repair keeps the valid prefix', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    const start = cli('run', 'demo', '--workspace', ws, '--spec', 'x', '--layout', 'codemachine');
    expect(start.code).toBe(0);
    const runId = /phasebridge approve (\S+)/.exec(start.out)![1]!;
    const dir = join(ws, '.phasebridge', 'runs', runId);
    const ledger = join(dir, 'ledger.jsonl');

    // A hand edit of run.json is not the run's state: status replays the ledger.
    const runJson = join(dir, 'run.json');
    writeFileSync(runJson, readFileSync(runJson, 'utf8').replace('"awaiting"', '"completed"'));
    const status = cli('status', runId);
    expect(status.out).toMatch(/status +awaiting/);
    expect(status.out).not.toContain('completed:');
    expect(JSON.parse(cli('status', runId, '--json').out).status).toBe('awaiting');

    // A garbage registry.db: the approval is committed and says what failed, no stack trace.
    const registry = join(ws, '.codemachine', 'logs', 'registry.db');
    for (const f of [registry, `${registry}-wal`, `${registry}-shm`]) rmSync(f, { force: true });
    writeFileSync(registry, 'not a database\n'.repeat(100));
    const approve = cli('approve', runId, '--detach');
    expect(approve.code).toBe(0);
    expect(approve.out).toContain(`run ${runId} is running step build`);
    expect(approve.err).toMatch(
      /^phasebridge: warning: the codemachine projection failed \(file is not a database\); the ledger has the run/m,
    );
    expect(approve.err).not.toMatch(/^\s+at /m);
    // Once the file is gone the next command rebuilds it from the whole ledger.
    rmSync(registry);
    const cancel = cli('cancel', runId);
    expect(cancel.code).toBe(0);
    expect(cancel.err).toBe('');
    const db = new Database(registry, { readonly: true });
    expect(db.prepare('SELECT step_id, status FROM agent_runs').all()).toEqual([
      { step_id: 'plan', status: 'completed' },
    ]);
    db.close();

    // A garbled middle line blocks the run; a dry run tells what a repair keeps and drops.
    const lines = readFileSync(ledger, 'utf8').split('\n').slice(0, -1);
    // start, step started, session (job id), session (the engine's own id), finished, approve, cancel.
    expect(lines).toHaveLength(7);
    lines[4] = lines[4]!.replace('"events":[', '"events":[,');
    writeFileSync(ledger, `${lines.join('\n')}\n`);
    const blocked = cli('status', runId);
    expect(blocked.out).toMatch(/status +blocked \(corrupt\): ledger line 5 is corrupt/);
    expect(blocked.out).toContain(`phasebridge repair ${runId} --dry-run`);
    const dry = cli('repair', runId, '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.out).toContain('  - ledger line 5 is corrupt: not valid JSON');
    expect(dry.out).toContain('would keep ledger lines 1-4 of 7');
    expect(dry.out).toMatch(
      /would drop 3 line\(s\):\n {2}line 5: stepFinished \(key job:.*:plan:1:finished\)\n {2}line 6: answerCheckpoint \(key cli:[^)]+\)\n {2}line 7: cancel/,
    );
    expect(readFileSync(ledger, 'utf8')).toBe(`${lines.join('\n')}\n`);

    const repair = cli('repair', runId);
    expect(repair.code).toBe(0);
    expect(repair.out).toContain('kept ledger lines 1-4 of 7');
    expect(repair.out).toMatch(/backups: ledger\.jsonl\.corrupt-\S+, run\.json\.corrupt-\S+/);
    const backup = readdirSync(dir).find((f) => f.startsWith('ledger.jsonl.corrupt-'))!;
    expect(readFileSync(join(dir, backup), 'utf8')).toBe(`${lines.join('\n')}\n`);
    expect(readFileSync(ledger, 'utf8').startsWith(`${lines.slice(0, 4).join('\n')}\n`)).toBe(true);
    expect(cli('status', runId).out).not.toContain('corrupt');
    expect(cli('repair', runId).out).toMatch(/^run \S+: nothing to repair/);

    // Nothing valid to keep: refused, exit 1, nothing changed.
    const kept = readFileSync(ledger, 'utf8');
    writeFileSync(ledger, `garbage\n${kept.slice(kept.indexOf('\n') + 1)}`);
    const before = readFileSync(ledger, 'utf8');
    const refused = cli('repair', runId);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain('cannot repair it: no valid ledger line to keep');
    expect(readFileSync(ledger, 'utf8')).toBe(before);
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });
});
