/**
 * The codexclaw layout on disk: `.codexclaw/sessions/<run id>.json` and `.codexclaw/ledger.jsonl`
 * after each kind of phase change, compared with golden files (UPDATE_GOLDEN=1 rewrites them).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PASS, type PabcdDriver, RUN_ID, readCodexclaw, storeDriver } from '../../pabcd/support.ts';

const GOLDEN = path.join(import.meta.dirname, 'golden');
let dispose: (() => Promise<void>) | undefined;
afterEach(async () => {
  await dispose?.();
  dispose = undefined;
});

function open(): { d: PabcdDriver; ws: string } {
  const h = storeDriver();
  dispose = h.dispose;
  return h;
}

function golden(name: string, ws: string): void {
  const text = `${JSON.stringify(readCodexclaw(ws), null, 2)}\n`;
  const file = path.join(GOLDEN, `${name}.golden.json`);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, text);
  expect(text).toBe(fs.readFileSync(file, 'utf8'));
}

describe('codexclaw layout golden files', () => {
  it('01 valid move: start enters I, the interview attests I→P', async () => {
    const { d, ws } = open();
    await d.start();
    await d.finish(PASS.interview);
    golden('01-valid-move', ws);
  });

  it('02 refused move: an illegal revert C→A writes nothing', async () => {
    const { d, ws } = open();
    await d.start();
    await d.passUntil('check');
    const before = readCodexclaw(ws);
    expect((await d.send({ type: 'revert', toStepId: 'audit', source: 'command' }))?.message).toBe(
      'illegal transition C->A',
    );
    expect(readCodexclaw(ws)).toEqual(before);
    golden('02-refused-move', ws);
  });

  it('03 gate refused: three Stop blocks in A, then the run waits at A', async () => {
    const { d, ws } = open();
    await d.start();
    await d.passUntil('audit');
    for (let i = 0; i < 4; i++)
      await d.finish({ did: 'reviewed', auditOutput: 'no', verdict: 'fail' });
    expect(d.run.status).toBe('awaiting');
    golden('03-gate-refused', ws);
  });

  it('04 override with evidence: approving the audit gate with a reason', async () => {
    const { d, ws } = open();
    await d.start();
    await d.passUntil('audit');
    for (let i = 0; i < 4; i++)
      await d.finish({ did: 'reviewed', auditOutput: 'no', verdict: 'fail' });
    await d.ok({ type: 'answerCheckpoint', answer: 'approve', reason: 'audited by hand' });
    golden('04-override', ws);
  });

  it('05 done: one C→IDLE row, flags reset, session IDLE', async () => {
    const { d, ws } = open();
    await d.start();
    await d.passUntil('done');
    await d.finish();
    expect(d.run.status).toBe('completed');
    golden('05-done', ws);
  });

  it('06 reset: a reset row to IDLE, then the cycle starts again', async () => {
    const { d, ws } = open();
    await d.start();
    await d.passUntil('build');
    await d.ok({ type: 'reset', source: 'command' });
    golden('06-reset', ws);
  });
});

describe('codexclaw layout files', () => {
  it('keeps unknown fields of the session file and rows of other sessions', async () => {
    const { d, ws } = open();
    const root = path.join(ws, '.codexclaw');
    fs.mkdirSync(path.join(root, 'sessions'), { recursive: true });
    const session = path.join(root, 'sessions', `${RUN_ID}.json`);
    fs.writeFileSync(session, JSON.stringify({ loopArmSeen: true, planEpoch: 'e1', phase: 'B' }));
    const foreign =
      '{"ts":"2026-01-01T00:00:00.000Z","sessionId":"other","from":"IDLE","to":"P","reason":"chat","x":1}';
    // A torn last line (no newline) must stay its own line.
    fs.writeFileSync(path.join(root, 'ledger.jsonl'), `${foreign}\n{"ts":"torn`);
    await d.start();
    await d.finish(PASS.interview);
    const kept = JSON.parse(fs.readFileSync(session, 'utf8'));
    expect(kept).toMatchObject({ loopArmSeen: true, planEpoch: 'e1', phase: 'P' });
    const lines = fs.readFileSync(path.join(root, 'ledger.jsonl'), 'utf8').split('\n');
    expect(lines[0]).toBe(foreign);
    expect(lines[1]).toBe('{"ts":"torn');
    expect(lines.slice(2, 4).map((l) => JSON.parse(l).to)).toEqual(['I', 'P']);
  });

  it('writes files 0600 in folders 0700 and refuses a planted symlink', async () => {
    const { d, ws } = open();
    await d.start();
    const root = path.join(ws, '.codexclaw');
    expect(fs.statSync(path.join(root, 'sessions', `${RUN_ID}.json`)).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(root, 'ledger.jsonl')).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.join(root, 'sessions')).mode & 0o777).toBe(0o700);
    const outside = path.join(ws, 'outside.jsonl');
    fs.writeFileSync(outside, '');
    fs.rmSync(path.join(root, 'ledger.jsonl'));
    fs.symlinkSync(outside, path.join(root, 'ledger.jsonl'));
    // The command commits; the projection refuses the link and reports a warning.
    await expect(d.finish(PASS.interview)).rejects.toThrow(/symlink/);
    expect(fs.readFileSync(outside, 'utf8')).toBe('');
  });

  it('re-projecting after a crash appends no row twice', async () => {
    const { d, ws } = open();
    await d.start();
    await d.finish(PASS.interview);
    const { codexclawLayout } = await import('../../../../src/engine/layouts/codexclaw/index.ts');
    const ctx = { runDir: ws, workspace: ws, events: [], previous: null, rebuild: true };
    await codexclawLayout.project(d.run, ctx);
    await codexclawLayout.project(d.run, ctx);
    expect(readCodexclaw(ws).ledger).toHaveLength(2);
  });
});
