import { describe, expect, it } from 'vitest';
import { describeStanding } from '../../../src/cli/render/standing.ts';
import { apply, awaitingPlan, blockedOnBuild, completed, RUN_ID } from './demo-states.ts';

describe('describeStanding', () => {
  it('names the checkpoint awaited and the commands that answer it, exit 0', () => {
    const s = describeStanding(awaitingPlan().state);
    expect(s.exitCode).toBe(0);
    expect(s.lines[0]).toBe('awaiting approval of plan: step plan finished: approve to continue');
    expect(s.lines).toContain(`  phasebridge approve ${RUN_ID} [--reason TEXT]`);
    expect(s.lines).toContain(`  phasebridge reject ${RUN_ID} --reason TEXT`);
  });

  it('says a completed run is done with its spend, exit 0', () => {
    const s = describeStanding(completed());
    expect(s.exitCode).toBe(0);
    expect(s.lines[0]).toMatch(
      new RegExp(`^run ${RUN_ID} completed: all steps completed \\(.* tokens, \\$0\\.0369\\)$`),
    );
  });

  it('gives the reason of a blocked run and how to move it, exit 1', () => {
    const s = describeStanding(blockedOnBuild());
    expect(s.exitCode).toBe(1);
    expect(s.lines[0]).toBe(`run ${RUN_ID} is blocked at build: step build failed: exit code 3`);
    expect(s.lines.slice(1)).toEqual([
      `  phasebridge retry ${RUN_ID}`,
      `  phasebridge skip ${RUN_ID}`,
      `  phasebridge cancel ${RUN_ID}`,
    ]);
  });

  it('treats a cancelled run as success only when cancelling was asked for', () => {
    const cancelled = apply(
      blockedOnBuild(),
      { type: 'cancel', actor: { id: 'cli:alice' }, reason: 'enough' } as never,
      20,
    ).state;
    expect(describeStanding(cancelled).exitCode).toBe(1);
    const wanted = describeStanding(cancelled, { cancelWanted: true });
    expect(wanted.exitCode).toBe(0);
    expect(wanted.lines[0]).toBe(`run ${RUN_ID} cancelled: cancelled by alice: enough`);
  });
});
