/**
 * Attestations: the evidence an agent writes into its directive (`attest`) to pass a PABCD gate.
 * Like codexclaw's attest.ts the check is on form only (a narrative, pasted output, a verdict,
 * an exit code): a bare boolean is never evidence, so a lazy agent cannot flip a gate.
 */
import { z } from 'zod';
import type { GateName, ScanEvidence } from './phases.ts';

/** Zod schema of a directive's `attest` object. */
export const attestationSchema = z.strictObject({
  /** What the agent actually did in this phase (not a placeholder). */
  did: z.string().max(4000).optional(),
  /** A→B: the tail of the independent reviewer's output. */
  auditOutput: z.string().max(8000).optional(),
  /** A→B: the reviewer's verdict; only `pass` opens the gate. */
  verdict: z.enum(['pass', 'fail']).optional(),
  /** C→D: the tail of the check command's output. */
  checkOutput: z.string().max(8000).optional(),
  /** C→D: the check command's exit code; only 0 opens the gate. */
  exitCode: z.int().optional(),
  /** I→P: interview scan rounds run. */
  scanRounds: z.int().min(0).optional(),
  /** I→P: contradictions of high severity still open. */
  highContradictionCount: z.int().min(0).optional(),
});

/** An agent's attestation. */
export type Attestation = z.infer<typeof attestationSchema>;

/** Narratives that say nothing (codexclaw refuses the same). */
const PLACEHOLDER = /^(tbd|todo|n\/?a|none|done|ok|\.+|-+)$/i;

/** Why `gate` stays closed for this attestation, or null when it passes. */
export function gateProblem(gate: GateName, att: Attestation | undefined): string | null {
  const did = att?.did?.trim() ?? '';
  if (did === '' || PLACEHOLDER.test(did)) {
    return 'the attestation needs "did": what was actually done in this phase';
  }
  if (gate === 'interview') {
    const open = att?.highContradictionCount ?? 0;
    return open > 0 ? `${open} high-severity contradiction(s) are still open` : null;
  }
  if (gate === 'auditPassed') {
    if (!att?.auditOutput?.trim()) return 'the attestation needs "auditOutput" from the reviewer';
    if (att.verdict !== 'pass') return `the audit verdict is ${att.verdict ?? 'missing'}, not pass`;
    return null;
  }
  if (!att?.checkOutput?.trim()) return 'the attestation needs "checkOutput" of the check command';
  if (att.exitCode !== 0) return `the check exit code is ${att.exitCode ?? 'missing'}, not 0`;
  return null;
}

/** The scan evidence an I→P override records (zeros when the agent reported none). */
export function scanEvidenceOf(att: Attestation | undefined): ScanEvidence {
  return {
    scanRounds: att?.scanRounds ?? 0,
    highContradictionCount: att?.highContradictionCount ?? 0,
  };
}
