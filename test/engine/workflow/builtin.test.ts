import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEMO_WORKFLOW } from '../../../src/engine/workflow/builtin.ts';
import { loadWorkflow } from '../../../src/engine/workflow/load.ts';

const EXAMPLE = fileURLToPath(
  new URL('../../../examples/workflows/demo.workflow.yaml', import.meta.url),
);

describe('DEMO_WORKFLOW', () => {
  it('is plan (checkpoint after), build, review (loop to build max 2, checkpoint after)', () => {
    expect(DEMO_WORKFLOW.id).toBe('demo');
    expect(DEMO_WORKFLOW.steps.map((s) => [s.id, s.agent])).toEqual([
      ['plan', 'demo'],
      ['build', 'demo'],
      ['review', 'demo'],
    ]);
    expect(DEMO_WORKFLOW.steps[0]!.checkpoint).toMatchObject({ when: 'after', approvals: 1 });
    expect(DEMO_WORKFLOW.steps[1]!.checkpoint).toBeUndefined();
    expect(DEMO_WORKFLOW.steps[2]!.loop).toEqual({ backTo: 'build', max: 2 });
    expect(DEMO_WORKFLOW.steps[2]!.checkpoint?.when).toBe('after');
    for (const s of DEMO_WORKFLOW.steps) expect(s.prompt.length).toBeGreaterThan(10);
  });

  it('examples/workflows/demo.workflow.yaml parses to the same steps', async () => {
    const fromFile = await loadWorkflow(EXAMPLE, { knownAgents: ['demo'] });
    expect(fromFile.id).toBe(DEMO_WORKFLOW.id);
    expect(fromFile.name).toBe(DEMO_WORKFLOW.name);
    expect(fromFile.steps).toEqual(DEMO_WORKFLOW.steps);
  });
});
