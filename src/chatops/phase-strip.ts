/**
 * The PABCD phase strip of a codexclaw-layout run's status message (I · P · A · B · C · D with
 * the current phase marked, the gate flags, time in phase) and the phase history of `phase <run>`.
 * Pure; `now` is given.
 */
import type { RunState } from '../engine/model.ts';
import { GATE_LABELS } from '../engine/pabcd/decide-phase.ts';
import { type GateName, type PhaseMove, WORK_PHASES } from '../engine/pabcd/phases.ts';
import { actorName, durationWords } from './words.ts';

const GATES: readonly GateName[] = ['interview', 'auditPassed', 'checkPassed'];

/** The strip line, or null for a run without phases. */
export function phaseStrip(state: RunState, now: number): string | null {
  const p = state.pabcd;
  if (!p) return null;
  const strip = WORK_PHASES.map((x) => (x === p.phase ? `[${x}]` : x)).join(' · ');
  const flags = GATES.map((g) => `${GATE_LABELS[g]} ${p.flags[g] ? '✓' : '✗'}`).join(', ');
  const where = p.phase === 'IDLE' ? 'idle' : `in ${p.phase}`;
  return `${strip}  (${where} ${durationWords(now - Date.parse(p.since))}; gates: ${flags})`;
}

/** One history line: when, from → to, why, who, evidence. */
function moveLine(m: PhaseMove): string {
  const to = m.reason === 'done' ? 'D (done → IDLE)' : m.to;
  const who = m.actor === 'human' && m.by ? actorName(m.by) : 'the agent';
  const override = m.override ? ' · override' : '';
  const evidence = m.evidence ? ` · “${m.evidence}”` : '';
  return `${m.at.slice(0, 19).replace('T', ' ')} ${m.from} → ${to} · ${m.reason} by ${who}${override}${evidence}`;
}

/** The text of chat `phase <run>`: the strip and every move, oldest first. */
export function phaseHistory(state: RunState, now: number): string {
  const strip = phaseStrip(state, now);
  if (strip === null) return `Run ${state.id} has no PABCD phases (layout ${state.layout}).`;
  const moves = state.pabcd?.moves ?? [];
  const lines = moves.length === 0 ? ['no phase change yet'] : moves.map(moveLine);
  return [`Run ${state.id} phases`, strip, '', ...lines].join('\n');
}
