/**
 * Issue 18 item 9: a workflow's `subagents:` are the agents `trigger` can reach; they are what
 * CodeMachine's agents/agent-config.json registers, and a trigger naming another agent is refused.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  buildAgentConfig,
  serializeAgentConfig,
} from '../../src/engine/layouts/codemachine/agent-config.ts';
import { parseWorkflow } from '../../src/engine/workflow/load.ts';
import { Harness, wf } from './harness.ts';

const GOLDEN = path.join(
  import.meta.dirname,
  'layouts',
  'codemachine',
  'golden',
  'fidelity',
  '09-agent-config-subagents.golden.json',
);

const WITH_SUBAGENTS = wf(`
id: team
subagents: [code-reviewer, security-auditor]
steps:
  - { id: plan, agent: planner, prompt: plan it }
  - { id: build, agent: coder, prompt: build it }
`);

describe('subagents', () => {
  it('agent-config.json lists the declared subagents, not the step agents', () => {
    const info = (id: string) =>
      id === 'code-reviewer' ? { engine: 'claude', model: 'opus' } : undefined;
    const actual = serializeAgentConfig(buildAgentConfig(WITH_SUBAGENTS, info));
    if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(GOLDEN, actual);
    expect(actual).toBe(fs.readFileSync(GOLDEN, 'utf8'));
  });

  it('without subagents: the step agents stand in, as before', () => {
    const plain = wf(
      'id: p\nsteps:\n  - { id: a, agent: x, prompt: p }\n  - { id: b, agent: x, prompt: q }\n',
    );
    expect(buildAgentConfig(plain).map((e) => e.id)).toEqual(['x']);
  });

  it('a trigger reaches a declared subagent; any other agent blocks the run', () => {
    const ok = new Harness();
    ok.start(WITH_SUBAGENTS);
    expect(ok.finish({ action: 'trigger', triggerAgentId: 'code-reviewer' }).types).toEqual([
      'stepCompleted',
      'triggerQueued',
    ]);
    const refused = new Harness();
    refused.start(WITH_SUBAGENTS);
    const { types, effects } = refused.finish({ action: 'trigger', triggerAgentId: 'rm-rf' });
    expect(types).toEqual(['stepCompleted', 'runBlocked']);
    expect(effects).toEqual([]);
    expect(refused.run.blocked).toEqual({
      kind: 'failure',
      reason:
        "step plan triggered agent rm-rf, which is not among the workflow's subagents (code-reviewer, security-auditor)",
    });
  });

  it('unknown subagents are reported when the agents are known', () => {
    const yaml = 'id: t\nsubagents: [ghost]\nsteps:\n  - { id: a, agent: x, prompt: p }\n';
    expect(() => parseWorkflow(yaml, { file: 't.yaml', knownAgents: ['x'] })).toThrow(
      't.yaml: subagents[0]: unknown agent "ghost"',
    );
  });
});
