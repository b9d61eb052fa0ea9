/** The run folders left out of diffs are exactly phasebridge's and every layout's own. */
import { describe, expect, it } from 'vitest';
import { CODEMACHINE_DIR } from '../../../src/engine/layouts/codemachine/paths.ts';
import { CODEXCLAW_DIR } from '../../../src/engine/layouts/codexclaw/format.ts';
import { COORDINATOR_DIR } from '../../../src/engine/layouts/coordinator/format.ts';
import { FLOW_DIR } from '../../../src/engine/layouts/flow/format.ts';
import { inRunFolder, RUN_FOLDERS } from '../../../src/jobs/runner/run-folders.ts';

describe('run folders', () => {
  it("name phasebridge's folder and each layout's", () => {
    expect([...RUN_FOLDERS].sort()).toEqual(
      ['.phasebridge', CODEMACHINE_DIR, CODEXCLAW_DIR, FLOW_DIR, COORDINATOR_DIR].sort(),
    );
  });

  it('match the folder and what is inside it, not look-alikes', () => {
    expect(inRunFolder('.flow')).toBe(true);
    expect(inRunFolder('.flow/')).toBe(true);
    expect(inRunFolder('.phasebridge/runs/r/logs/a.log')).toBe(true);
    expect(inRunFolder('.flowers/a.txt')).toBe(false);
    expect(inRunFolder('src/.flow/a.txt')).toBe(false);
  });
});
