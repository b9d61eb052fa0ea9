import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  agentLogPath,
  codemachinePaths,
} from '../../../../src/engine/layouts/codemachine/index.ts';
import { ALICE, GOLDEN_WORKFLOW, RUN_ID } from './driver.ts';
import { type Harness, makeHarness } from './helpers.ts';

describe('the codemachine layout files', () => {
  let h: Harness;
  afterEach(async () => {
    await h.dispose();
  });

  it('writes the spec, the agents and a continue directive when the run starts', async () => {
    h = makeHarness({
      agentInfo: (id) => (id === 'coder' ? { engine: 'claude', model: 'sonnet' } : undefined),
    });
    await h.d.start();
    const p = codemachinePaths(h.ws);
    expect(fs.readFileSync(p.spec, 'utf8')).toBe('# Spec\n\nAdd a login page.\n');
    expect(JSON.parse(fs.readFileSync(p.agentConfig, 'utf8'))).toEqual([
      { id: 'planner', name: 'planner' },
      { id: 'coder', name: 'coder', engine: 'claude', model: 'sonnet' },
      { id: 'auditor', name: 'auditor' },
      { id: 'reviewer', name: 'reviewer' },
    ]);
    expect(JSON.parse(fs.readFileSync(p.directive, 'utf8'))).toEqual({ action: 'continue' });
  });

  it('resets the directive to continue when the next step is queued, not before', async () => {
    h = makeHarness();
    const p = codemachinePaths(h.ws);
    await h.d.start();
    await h.d.started('plan');
    // The agent asks for a checkpoint; committing its session must not wipe that out.
    fs.writeFileSync(p.directive, '{"action":"checkpoint","reason":"look"}');
    await h.session('plan');
    expect(JSON.parse(fs.readFileSync(p.directive, 'utf8')).action).toBe('checkpoint');
    // The step's outcome carries the directive; queuing build (before its agent exists) resets it.
    await h.d.finished('plan');
    expect(JSON.parse(fs.readFileSync(p.directive, 'utf8'))).toEqual({ action: 'continue' });
  });

  it('never writes through a symlinked .codemachine folder: the commit stands, with a warning', async () => {
    h = makeHarness();
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cm-elsewhere-'));
    try {
      fs.symlinkSync(elsewhere, path.join(h.ws, '.codemachine'));
      const r = await h.store.commit(RUN_ID, 'start', {
        type: 'start',
        at: h.d.now(),
        actor: ALICE,
        runId: RUN_ID,
        workflow: GOLDEN_WORKFLOW,
        workspace: h.ws,
        layout: 'codemachine',
        spec: 'x',
      });
      expect(r.ok && r.warnings).toEqual([
        expect.stringMatching(/^the codemachine projection failed \(.*symlink/),
      ]);
      expect(fs.readdirSync(elsewhere)).toEqual([]);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('agentLogPath', () => {
  it('names agent logs as CodeMachine does, with a file-safe agent name', () => {
    expect(agentLogPath('/ws', 12, 'code-reviewer', '2026-01-02T03:04:05.678Z')).toBe(
      '/ws/.codemachine/logs/agent-12-code-reviewer-2026-01-02T03-04-05.log',
    );
    expect(path.basename(agentLogPath('/ws', 3, '../evil/name', '2026-01-02T03:04:05Z'))).toBe(
      'agent-3-__evil_name-2026-01-02T03-04-05.log',
    );
  });
});
