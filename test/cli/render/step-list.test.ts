import { describe, expect, it } from 'vitest';
import { renderRunsTable } from '../../../src/cli/render/status-table.ts';
import {
  renderCheckpoint,
  renderLiveSteps,
  renderRunHeader,
  renderStepTable,
} from '../../../src/cli/render/step-list.ts';
import { awaitingPlan, blockedOnBuild, completed, RUN_ID } from './demo-states.ts';

const NOW = new Date('2026-11-29T14:31:00.000Z');

describe('status of one run', () => {
  it('shows each step with status, start, time, tokens and cost, and the total', () => {
    const lines = renderStepTable(completed(), NOW);
    expect(lines[0]).toMatch(
      /^\s+STEP\s+AGENT\s+STATUS\s+TRY\s+STARTED\s+TIME\s+TOKENS IN\/OUT\s+COST$/,
    );
    expect(lines[1]).toMatch(
      /plan\s+demo\s+completed\s+1\s+2026-11-29 14:30:01Z\s+2\.0s\s+1\.5k\/250\s+\$0\.0123/,
    );
    expect(lines[3]).toMatch(/^>\s+review\s+demo\s+completed/);
    expect(lines.at(-1)).toBe('total: 4.5k tokens in, 750 out, $0.0369');
  });

  it('marks steps that never ran and says why a step failed', () => {
    const lines = renderStepTable(blockedOnBuild(), NOW);
    expect(lines.find((l) => l.includes('review'))).toMatch(
      /review\s+demo\s+pending\s+-\s+-\s+-\s+-\s+-$/,
    );
    expect(lines).toContain('step build failed: exit code 3');
  });

  it('shows the header and the open checkpoint with its policy', () => {
    const state = awaitingPlan().state;
    const header = renderRunHeader(state);
    expect(header[0]).toBe(`run ${RUN_ID}`);
    expect(header).toContain('  status    awaiting');
    expect(header.some((l) => /^ {2}workflow {2}demo@[0-9a-f]{12}$/.test(l))).toBe(true);
    const cp = renderCheckpoint(state.checkpoint!, state);
    expect(cp).toEqual([
      'checkpoint plan:1 (after plan)',
      '  reason    step plan finished: approve to continue',
      '  answers   approve, reject, changes',
      '  policy    1 approval needed; never expires',
      '  opened    2026-11-29 14:30:03Z',
    ]);
  });
});

describe('live step list', () => {
  it('marks each step and shows a running step with its spinner and progress text', () => {
    const state = blockedOnBuild();
    const lines = renderLiveSteps(state, new Map(), 0, NOW, 200);
    expect(lines[0]).toBe(`run ${RUN_ID}  blocked (failure): step build failed: exit code 3`);
    expect(lines[1]).toMatch(/^✔ plan\s+completed\s+2\.0s\s+1\.8k tokens, \$0\.0123$/);
    expect(lines[2]).toMatch(/^✖ build\s+failed\s+1\.0s\s+exit code 3$/);
    expect(lines[3]).toMatch(/^· review\s+pending$/);
  });

  it('never draws a line wider than the terminal', () => {
    const lines = renderLiveSteps(blockedOnBuild(), new Map(), 0, NOW, 30);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(30);
    expect(lines[0]!.endsWith('…')).toBe(true);
  });
});

describe('runs table', () => {
  it('lists runs with status and workspace, or says how to start one', () => {
    expect(renderRunsTable([])[0]).toMatch(/^no runs yet/);
    const lines = renderRunsTable([
      {
        id: RUN_ID,
        workflowId: 'demo',
        workspace: '/tmp/ws',
        layout: 'native',
        status: 'awaiting',
        startedBy: 'cli:alice',
        originChat: null,
        spec: null,
        createdAt: Date.parse('2026-11-29T14:30:00Z'),
        updatedAt: Date.parse('2026-11-29T14:30:03Z'),
        finishedAt: null,
      },
    ]);
    expect(lines[0]).toMatch(/^RUN\s+WORKFLOW\s+STATUS\s+LAYOUT\s+UPDATED\s+WORKSPACE$/);
    expect(lines[1]).toBe(`${RUN_ID}  demo      awaiting  native  2026-11-29 14:30:03Z  /tmp/ws`);
  });
});
