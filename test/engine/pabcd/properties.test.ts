/**
 * Property: whatever commands a pabcd run gets (agents attesting or not, humans reverting,
 * skipping, answering, resetting, cancelling), `.codexclaw/ledger.jsonl` holds only legal moves,
 * each row starts where the previous one ended, and the session file's phase equals the last
 * row's `to` (D folded into IDLE).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isTerminal } from '../../../src/engine/model.ts';
import type { Attestation } from '../../../src/engine/pabcd/attest.ts';
import { isLegalRow, type Phase } from '../../../src/engine/pabcd/phases.ts';
import { PASS, readCodexclaw, storeDriver } from './support.ts';

const STEPS = ['interview', 'plan', 'audit', 'build', 'check', 'done'];

const action = fc.oneof(
  fc.record({ kind: fc.constant('finish' as const), good: fc.boolean(), loop: fc.boolean() }),
  fc.record({ kind: fc.constant('revert' as const), to: fc.constantFrom(...STEPS) }),
  fc.record({
    kind: fc.constant('answer' as const),
    answer: fc.constantFrom('approve' as const, 'reject' as const, 'loop' as const),
    reason: fc.boolean(),
  }),
  fc.constantFrom(
    { kind: 'skip' as const },
    { kind: 'reset' as const },
    { kind: 'cancel' as const },
    { kind: 'fail' as const },
    { kind: 'retry' as const },
  ),
);

const BAD: Attestation = { did: 'tbd' };

describe('pabcd ledger properties', () => {
  it('only legal moves; session phase = last row to', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(action, { maxLength: 25 }), async (actions) => {
        const h = storeDriver();
        const { d, ws } = h;
        try {
          await d.start();
          for (const a of actions) {
            if (isTerminal(d.run.status)) break;
            const step = d.run.steps[d.run.cursor]!;
            const inFlight = step.status === 'queued' || step.status === 'running';
            if (a.kind === 'finish' && d.run.status === 'active' && inFlight) {
              await d.finish(a.good ? PASS[step.id] : BAD, a.loop ? 'loop' : 'continue');
            } else if (a.kind === 'fail' && d.run.status === 'active' && inFlight) {
              if (step.status === 'queued') {
                await d.ok({ type: 'stepStarted', stepId: step.id, attempt: step.attempt });
              }
              await d.send({
                type: 'stepFailed',
                stepId: step.id,
                attempt: step.attempt,
                error: 'x',
              });
            } else if (a.kind === 'revert') {
              await d.send({ type: 'revert', toStepId: a.to, source: 'command' });
            } else if (a.kind === 'answer') {
              const reason = a.reason ? { reason: 'because' } : {};
              await d.send({ type: 'answerCheckpoint', answer: a.answer, ...reason });
            } else if (a.kind === 'reset' || a.kind === 'skip' || a.kind === 'cancel') {
              const extra = a.kind === 'reset' ? { source: 'command' as const } : {};
              await d.send({ type: a.kind, ...extra } as never);
            } else if (a.kind === 'retry') {
              await d.send({ type: 'retry' });
            }
          }
          const { session, ledger } = readCodexclaw(ws);
          const rows = ledger as { from: Phase | null; to: Phase; reason: string }[];
          let at: Phase = 'IDLE';
          for (const row of rows) {
            expect(isLegalRow(row.from, row.to, row.reason), JSON.stringify(row)).toBe(true);
            expect(row.from).toBe(at);
            at = row.to;
          }
          expect((session as { phase: Phase }).phase).toBe(rows.at(-1)!.to);
          expect(rows.map((r) => r.to)).not.toContain('D');
        } finally {
          await h.dispose();
        }
      }),
      { numRuns: 60 },
    );
  });
});
