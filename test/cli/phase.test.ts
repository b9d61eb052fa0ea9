/**
 * `phasebridge phase RUN` through the real CLI: a pabcd run held at its closed interview gate
 * (the demo agent attests nothing) shows its strip and who moved it into I.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-phase-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');

describe('phasebridge phase', () => {
  it('prints the phase strip and history of a pabcd run; refuses an unknown run', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    const start = runCli(['run', 'pabcd', '--workspace', ws, '--spec', 'x'], home, root);
    expect(start.code).toBe(0);
    const runId = /phasebridge approve (\S+)/.exec(start.out)![1]!;
    const phase = runCli(['phase', runId], home, root);
    expect(phase.code).toBe(0);
    expect(phase.out).toContain(`Run ${runId} phases\n[I] · P · A · B · C · D  (in I `);
    expect(phase.out).toMatch(/IDLE → I · chat by /);
    const unknown = runCli(['phase', '2026-01-01T000000Z-nosuch'], home, root);
    expect(unknown.code).not.toBe(0);
    expect(unknown.err).toContain("no run '2026-01-01T000000Z-nosuch'");
  });
});
