/**
 * `.codexclaw/ledger.jsonl` is shared with codexclaw's own sessions: rows they append between two
 * of our commits (whole or torn) are kept, and each phase move of ours adds exactly its own row
 * after them, however the file changed since this process last read it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PASS, type PabcdDriver, RUN_ID, storeDriver } from '../../pabcd/support.ts';

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

/** The parsed rows of the shared ledger (a torn line is skipped, as codexclaw's readers do). */
function rows(ws: string): { sessionId?: string }[] {
  const text = fs.readFileSync(path.join(ws, '.codexclaw', 'ledger.jsonl'), 'utf8');
  return text.split('\n').flatMap((line) => {
    try {
      return line.trim() === '' ? [] : [JSON.parse(line) as { sessionId?: string }];
    } catch {
      return [];
    }
  });
}

const ours = (ws: string) => rows(ws).filter((r) => r.sessionId?.includes(RUN_ID)).length;

describe('codexclaw shared ledger', () => {
  it("keeps other sessions' rows appended between our commits and adds only our own", async () => {
    const { d, ws } = open();
    const file = path.join(ws, '.codexclaw', 'ledger.jsonl');
    await d.start();
    const afterStart = ours(ws);
    expect(afterStart).toBeGreaterThan(0);
    fs.appendFileSync(file, '{"sessionId":"other-session","from":"IDLE","to":"I"}\n');
    await d.finish(PASS.interview); // I → P: one row of ours
    expect(ours(ws)).toBe(afterStart + 1);
    // Another writer dies mid-row: our next row starts on a line of its own.
    fs.appendFileSync(file, '{"sessionId":"other-session","fr');
    await d.finish(PASS.plan); // P → A
    expect(ours(ws)).toBe(afterStart + 2);
    const all = rows(ws);
    expect(all.filter((r) => r.sessionId === 'other-session')).toHaveLength(1);
    expect(all.at(-1)?.sessionId).not.toBe('other-session');
    // The file replaced by a copy of itself (a rename, as an editor saves): counted again, no repeat.
    fs.copyFileSync(file, `${file}.tmp`);
    fs.renameSync(`${file}.tmp`, file);
    const step = d.run.steps[d.run.cursor]!;
    expect(
      await d.send({ type: 'stepStarted', stepId: step.id, attempt: step.attempt }),
    ).toBeNull();
    expect(ours(ws)).toBe(afterStart + 2);
  });
});
