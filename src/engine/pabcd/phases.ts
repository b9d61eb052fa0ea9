/**
 * codexclaw's PABCD phase model as the engine keeps it for a run: phases, the legal moves, the
 * gate flags and the fold of one phase move. Pure data and functions (decide/evolve use them).
 *
 * The rules follow codexclaw's pabcd-state (fsm.ts, orchestrate-apply.ts): D is never a resting
 * phase in codexclaw's files (finishing writes one row C→IDLE, reason `done`), a reset goes to
 * IDLE from anywhere, entering I clears the flags, and a Stop continuation is bounded.
 */
import type { Actor } from '../run-basics.ts';

/** A codexclaw phase; IDLE is the rest state a cycle returns to. */
export type Phase = 'IDLE' | 'I' | 'P' | 'A' | 'B' | 'C' | 'D';

/** The work phases in cycle order (the preset's steps). */
export const WORK_PHASES: readonly Exclude<Phase, 'IDLE'>[] = ['I', 'P', 'A', 'B', 'C', 'D'];

/** Full names of the work phases, also accepted as step ids. */
export const PHASE_NAMES: Readonly<Record<Exclude<Phase, 'IDLE'>, string>> = Object.freeze({
  I: 'interview',
  P: 'plan',
  A: 'audit',
  B: 'build',
  C: 'check',
  D: 'done',
});

/** The legal moves (issue 13; codexclaw's adjacency table plus A→P re-plan). */
export const LEGAL_MOVES: Readonly<Record<Phase, readonly Phase[]>> = Object.freeze({
  IDLE: ['I', 'P'],
  I: ['P', 'IDLE'],
  P: ['I', 'A'],
  A: ['I', 'B', 'P'],
  B: ['I', 'C'],
  C: ['I', 'D', 'B', 'P'],
  D: ['I', 'IDLE'],
});

/** codexclaw's bound on consecutive Stop blocks in one phase (its hook's MAX_STOP_BLOCKS). */
export const MAX_STOP_BLOCKS = 3;

/** True when `from → to` is in the adjacency table. */
export function isLegalMove(from: Phase, to: Phase): boolean {
  return LEGAL_MOVES[from].includes(to);
}

/** The gate flags of codexclaw's State. */
export interface PhaseFlags {
  interview: boolean;
  auditPassed: boolean;
  checkPassed: boolean;
}

/** Which flag gates a move: I→P interview (soft), A→B auditPassed, C→D checkPassed. */
export type GateName = keyof PhaseFlags;

/** The gate of `from → to`, or null for an ungated move. */
export function gateOf(from: Phase, to: Phase): GateName | null {
  if (from === 'I' && to === 'P') return 'interview';
  if (from === 'A' && to === 'B') return 'auditPassed';
  if (from === 'C' && to === 'D') return 'checkPassed';
  return null;
}

/** Interview scan evidence recorded with an I→P override (codexclaw's scanEvidence). */
export interface ScanEvidence {
  scanRounds: number;
  highContradictionCount: number;
}

/** One phase change: a codexclaw LedgerEntry plus who did it, for our own ledger. */
export interface PhaseMove {
  at: string;
  from: Phase;
  to: Phase;
  /** `chat` (a human), `orchestrate` (an agent's attested move), `start`, `done` or `reset`. */
  reason: string;
  evidence?: string;
  actor: 'human' | 'agent';
  override?: boolean;
  scanEvidence?: ScanEvidence;
  /** Who moved it (our actor; not written to codexclaw's ledger, which has no such field). */
  by?: Actor;
}

/** The phase part of a run's state (present on codexclaw-layout runs). */
export interface PabcdState {
  /** The current phase; `D` while the done step runs (codexclaw's files show IDLE then). */
  phase: Phase;
  /** When the current phase was entered. */
  since: string;
  /** Last change of this phase state (a move or a Stop block): codexclaw's `updatedAt`. */
  updatedAt: string;
  flags: PhaseFlags;
  stopBlockPhase: Phase | null;
  stopBlockCount: number;
  /** Every move so far, oldest first: the rows of `.codexclaw/ledger.jsonl`. */
  moves: PhaseMove[];
}

const CLEAR: PhaseFlags = Object.freeze({
  interview: false,
  auditPassed: false,
  checkPassed: false,
});

/** The phase state a run starts with. */
export function initialPabcd(at: string): PabcdState {
  return {
    phase: 'IDLE',
    since: at,
    updatedAt: at,
    flags: { ...CLEAR },
    stopBlockPhase: null,
    stopBlockCount: 0,
    moves: [],
  };
}

/** Folds one move: flags flip on the gated edge, clear on entering I and on closing to IDLE. */
export function foldMove(s: PabcdState, move: PhaseMove): PabcdState {
  // A done row (C→IDLE) passes the check gate and closes the cycle: its flags clear either way.
  const flags =
    move.to === 'I' || move.to === 'IDLE' ? { ...CLEAR } : withGate(s.flags, move.from, move.to);
  // A done row is C→IDLE in codexclaw's ledger; we stay in D while the done step runs.
  const phase: Phase = move.reason === 'done' ? 'D' : move.to;
  return {
    phase,
    since: move.at,
    updatedAt: move.at,
    flags,
    stopBlockPhase: null,
    stopBlockCount: 0,
    moves: [...s.moves, move],
  };
}

/** The flags after the move `from → to`: its gate, if it has one, is passed. */
function withGate(flags: PhaseFlags, from: Phase, to: Phase): PhaseFlags {
  const gate = gateOf(from, to);
  return gate === null ? { ...flags } : { ...flags, [gate]: true };
}

/** Counts one Stop block (a gate that did not pass) in the current phase. */
export function foldStopBlock(s: PabcdState, at: string): PabcdState {
  const count = s.stopBlockPhase === s.phase ? s.stopBlockCount + 1 : 1;
  return { ...s, updatedAt: at, stopBlockPhase: s.phase, stopBlockCount: count };
}

/** The phase codexclaw's files show: D is folded into IDLE. */
export function storedPhase(phase: Phase): Phase {
  return phase === 'D' ? 'IDLE' : phase;
}

/** The phase a workflow step stands for: its id is a phase letter or name (any case). */
export function phaseOfStep(stepId: string): Exclude<Phase, 'IDLE'> | null {
  const id = stepId.toLowerCase();
  for (const p of WORK_PHASES) {
    if (id === p.toLowerCase() || id === PHASE_NAMES[p]) return p;
  }
  return null;
}

/**
 * True when a ledger row is a move codexclaw accepts: an adjacency edge, a `done` close C→IDLE,
 * or a `reset` to IDLE (codexclaw's explicit control override, allowed from any phase).
 */
export function isLegalRow(from: Phase | null, to: Phase, reason: string): boolean {
  if (to === 'IDLE' && reason === 'reset') return from !== 'IDLE';
  if (to === 'IDLE' && reason === 'done') return from === 'C';
  return from !== null && isLegalMove(from, to);
}
