/**
 * The PABCD gates, piece by piece: which move each gate guards, which rows codexclaw's ledger
 * accepts, how flags pass and clear as moves fold, how Stop blocks count, which step ids name a
 * phase, and what an attestation must hold for each gate (a bare or placeholder claim never opens
 * one, and every refusal says what is missing).
 */
import { describe, expect, it } from 'vitest';
import { gateProblem, scanEvidenceOf } from '../../../src/engine/pabcd/attest.ts';
import {
  foldMove,
  foldStopBlock,
  gateOf,
  initialPabcd,
  isLegalRow,
  type Phase,
  type PhaseMove,
  phaseOfStep,
} from '../../../src/engine/pabcd/phases.ts';

const PHASES: Phase[] = ['IDLE', 'I', 'P', 'A', 'B', 'C', 'D'];
const AT = '2026-12-02T10:00:00.000Z';

const move = (from: Phase, to: Phase, reason = 'chat'): PhaseMove => ({
  at: AT,
  from,
  to,
  reason,
  actor: 'human',
});

describe('phase moves and their gates', () => {
  it('exactly three moves are gated: I→P interview, A→B audit, C→D check', () => {
    const gated = PHASES.flatMap((from) =>
      PHASES.flatMap((to) => {
        const gate = gateOf(from, to);
        return gate === null ? [] : [`${from}→${to} ${gate}`];
      }),
    );
    expect(gated).toEqual(['I→P interview', 'A→B auditPassed', 'C→D checkPassed']);
  });

  it('accepts the ledger rows codexclaw accepts: its edges, a done close from C, a reset', () => {
    expect(isLegalRow('C', 'IDLE', 'done')).toBe(true);
    expect(isLegalRow('B', 'IDLE', 'done')).toBe(false);
    expect(isLegalRow(null, 'IDLE', 'done')).toBe(false);
    for (const from of ['I', 'P', 'A', 'B', 'C', 'D'] as const) {
      expect(isLegalRow(from, 'IDLE', 'reset')).toBe(true);
    }
    expect(isLegalRow('IDLE', 'IDLE', 'reset')).toBe(false);
    // Ordinary rows follow the adjacency table, whatever the reason says.
    expect(isLegalRow('I', 'IDLE', 'chat')).toBe(true);
    expect(isLegalRow('P', 'IDLE', 'chat')).toBe(false);
    expect(isLegalRow('A', 'P', 'orchestrate')).toBe(true);
    expect(isLegalRow('P', 'B', 'orchestrate')).toBe(false);
    expect(isLegalRow(null, 'I', 'start')).toBe(false);
  });

  it('flags pass on their gated move, stay through the cycle, clear on I and on closing', () => {
    let s = initialPabcd(AT);
    const flagsAfter = (m: PhaseMove) => {
      const given = s;
      const snapshot = structuredClone(s);
      s = foldMove(s, m);
      // A fold never changes the state it was given.
      expect(given).toEqual(snapshot);
      return { ...s.flags };
    };
    expect(flagsAfter(move('IDLE', 'I'))).toEqual({
      interview: false,
      auditPassed: false,
      checkPassed: false,
    });
    expect(flagsAfter(move('I', 'P'))).toEqual({
      interview: true,
      auditPassed: false,
      checkPassed: false,
    });
    expect(flagsAfter(move('P', 'A')).interview).toBe(true);
    expect(flagsAfter(move('A', 'B'))).toEqual({
      interview: true,
      auditPassed: true,
      checkPassed: false,
    });
    expect(flagsAfter(move('B', 'C')).auditPassed).toBe(true);
    // Back to build from check: nothing is passed that was not.
    expect(flagsAfter(move('C', 'B'))).toEqual({
      interview: true,
      auditPassed: true,
      checkPassed: false,
    });
    flagsAfter(move('B', 'C'));
    // The done row closes the cycle: phase D while the done step runs, flags cleared.
    expect(flagsAfter(move('C', 'IDLE', 'done'))).toEqual({
      interview: false,
      auditPassed: false,
      checkPassed: false,
    });
    expect(s.phase).toBe('D');
    expect(s.moves.map((m) => `${m.from}→${m.to}`)).toHaveLength(8);
    // Entering I again clears what a new cycle had passed.
    s = foldMove(foldMove(s, move('D', 'I')), move('I', 'P'));
    expect(s.flags.interview).toBe(true);
    expect(foldMove(s, move('P', 'I')).flags.interview).toBe(false);
    // A reset closes to IDLE (not D) and clears too.
    const reset = foldMove(s, move('P', 'IDLE', 'reset'));
    expect(reset.phase).toBe('IDLE');
    expect(reset.flags.interview).toBe(false);
  });

  it('initial states share nothing: passing a flag in one leaves another untouched', () => {
    const a = initialPabcd(AT);
    const b = initialPabcd(AT);
    a.flags.auditPassed = true;
    expect(b.flags.auditPassed).toBe(false);
    expect(initialPabcd(AT)).toEqual({
      phase: 'IDLE',
      since: AT,
      updatedAt: AT,
      flags: { interview: false, auditPassed: false, checkPassed: false },
      stopBlockPhase: null,
      stopBlockCount: 0,
      moves: [],
    });
  });

  it('Stop blocks count per phase, start again in a new phase, and a move resets them', () => {
    let s = foldMove(initialPabcd(AT), move('IDLE', 'P'));
    s = foldStopBlock(s, '2026-12-02T10:01:00.000Z');
    s = foldStopBlock(s, '2026-12-02T10:02:00.000Z');
    expect(s).toMatchObject({
      stopBlockPhase: 'P',
      stopBlockCount: 2,
      updatedAt: '2026-12-02T10:02:00.000Z',
      since: AT,
    });
    // A block counted in another phase does not carry over.
    const elsewhere = foldStopBlock({ ...s, phase: 'A' }, AT);
    expect(elsewhere).toMatchObject({ stopBlockPhase: 'A', stopBlockCount: 1 });
    const moved = foldMove(s, move('P', 'A'));
    expect(moved).toMatchObject({ stopBlockPhase: null, stopBlockCount: 0 });
  });

  it('a step names a phase by its letter or its name, in any case, and nothing else', () => {
    expect(['p', 'P', 'plan', 'PLAN', 'Plan'].map(phaseOfStep)).toEqual(['P', 'P', 'P', 'P', 'P']);
    expect(
      ['i', 'interview', 'A', 'audit', 'b', 'build', 'C', 'check', 'd', 'Done'].map(phaseOfStep),
    ).toEqual(['I', 'I', 'A', 'A', 'B', 'B', 'C', 'C', 'D', 'D']);
    expect(['planning', 'idle', 'IDLE', '', 'pa'].map(phaseOfStep)).toEqual([
      null,
      null,
      null,
      null,
      null,
    ]);
  });
});

describe('attestations', () => {
  const DID = { did: 'ran the interview scan twice' };

  it('every gate needs "did", and a placeholder is not one', () => {
    const why = 'the attestation needs "did": what was actually done in this phase';
    for (const gate of ['interview', 'auditPassed', 'checkPassed'] as const) {
      expect(gateProblem(gate, undefined)).toBe(why);
      expect(gateProblem(gate, {})).toBe(why);
      for (const did of [
        '',
        '   ',
        'TBD',
        'todo',
        'n/a',
        'NA',
        'none',
        ' done ',
        'ok',
        '...',
        '---',
      ]) {
        expect(gateProblem(gate, { did })).toBe(why);
      }
    }
  });

  it('interview passes unless high-severity contradictions are open', () => {
    expect(gateProblem('interview', DID)).toBeNull();
    expect(gateProblem('interview', { ...DID, highContradictionCount: 0 })).toBeNull();
    expect(gateProblem('interview', { ...DID, highContradictionCount: 2 })).toBe(
      '2 high-severity contradiction(s) are still open',
    );
  });

  it("audit needs the reviewer's output and a pass verdict", () => {
    const needs = 'the attestation needs "auditOutput" from the reviewer';
    expect(gateProblem('auditPassed', DID)).toBe(needs);
    expect(gateProblem('auditPassed', { ...DID, auditOutput: '  \n', verdict: 'pass' })).toBe(
      needs,
    );
    const output = { ...DID, auditOutput: 'LGTM: 0 findings' };
    expect(gateProblem('auditPassed', output)).toBe('the audit verdict is missing, not pass');
    expect(gateProblem('auditPassed', { ...output, verdict: 'fail' })).toBe(
      'the audit verdict is fail, not pass',
    );
    expect(gateProblem('auditPassed', { ...output, verdict: 'pass' })).toBeNull();
  });

  it("check needs the command's output and exit code 0", () => {
    const needs = 'the attestation needs "checkOutput" of the check command';
    expect(gateProblem('checkPassed', DID)).toBe(needs);
    expect(gateProblem('checkPassed', { ...DID, checkOutput: ' ', exitCode: 0 })).toBe(needs);
    const output = { ...DID, checkOutput: '42 passed' };
    expect(gateProblem('checkPassed', output)).toBe('the check exit code is missing, not 0');
    expect(gateProblem('checkPassed', { ...output, exitCode: 1 })).toBe(
      'the check exit code is 1, not 0',
    );
    expect(gateProblem('checkPassed', { ...output, exitCode: 0 })).toBeNull();
  });

  it('an override records the scan evidence given, zeros for what was not', () => {
    expect(scanEvidenceOf(undefined)).toEqual({ scanRounds: 0, highContradictionCount: 0 });
    expect(scanEvidenceOf(DID)).toEqual({ scanRounds: 0, highContradictionCount: 0 });
    expect(scanEvidenceOf({ ...DID, scanRounds: 3 })).toEqual({
      scanRounds: 3,
      highContradictionCount: 0,
    });
    expect(scanEvidenceOf({ scanRounds: 2, highContradictionCount: 1 })).toEqual({
      scanRounds: 2,
      highContradictionCount: 1,
    });
  });
});
