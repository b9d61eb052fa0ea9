import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadWorkflow, parseWorkflow } from '../../../src/engine/workflow/load.ts';
import { InvalidInputError, NotFoundError } from '../../../src/errors.ts';

const F = 'wf/team.workflow.yaml';

/** The error message parseWorkflow throws for `yaml` (fails the test when it parses). */
function problems(yaml: string, knownAgents?: string[]): string[] {
  try {
    parseWorkflow(yaml, { file: F, ...(knownAgents ? { knownAgents } : {}) });
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidInputError);
    return (err as Error).message.split('\n').filter((l) => l.startsWith(`${F}: `));
  }
  throw new Error('workflow parsed, expected problems');
}

const step = (extra = '') => `  - { id: s1, agent: a, prompt: p${extra} }`;

describe('parseWorkflow', () => {
  it('resolves a full step: durations in ms, checkpoint defaults, loop, retries', () => {
    const w = parseWorkflow(
      `
id: team
name: Team flow
version: 3
layout: codemachine
tracks: [quick]
conditions: [docs]
steps:
  - id: plan
    agent: planner
    prompt: Plan it.
    checkpoint: { when: before, expiresIn: 2h, onExpiry: approve }
  - id: build
    agent: coder
    prompt: Build it.
    retries: { count: 2 }
    timeout: 30m
    executeOnce: true
    tracks: [quick]
    conditions: [docs]
    loop: { backTo: plan, max: 3 }
`,
      { file: F, knownAgents: ['planner', 'coder'] },
    );
    expect(w).toMatchObject({
      id: 'team',
      name: 'Team flow',
      layout: 'codemachine',
      file: 'team.workflow.yaml',
    });
    expect(w.version).toMatch(/^[0-9a-f]{12}$/);
    expect(w.steps[0]!.checkpoint).toEqual({
      when: 'before',
      approvals: 1,
      fourEyes: false,
      expiresInMs: 7_200_000,
      onExpiry: 'approve',
    });
    expect(w.steps[1]).toEqual({
      id: 'build',
      agent: 'coder',
      prompt: 'Build it.',
      retries: { count: 2, backoffMs: 2000 },
      timeoutMs: 1_800_000,
      executeOnce: true,
      tracks: ['quick'],
      conditions: ['docs'],
      loop: { backTo: 'plan', max: 3 },
    });
  });

  it('version is a content hash: the same text gives the same version, any change another', () => {
    const a = parseWorkflow(`id: x\nsteps:\n${step()}\n`, { file: F });
    const b = parseWorkflow(`id: x\nsteps:\n${step()}\n`, { file: F });
    const c = parseWorkflow(`id: x\nsteps:\n${step()}\n# comment\n`, { file: F });
    expect(a.version).toBe(b.version);
    expect(a.version).not.toBe(c.version);
  });

  it('a prompt list is a chain of prompts: prompt is the first, chain all of them', () => {
    const w = parseWorkflow(
      'id: x\nsteps:\n  - { id: a, agent: a, prompt: [one, two] }\n  - { id: b, agent: a, prompt: [only] }\n',
      { file: F },
    );
    expect(w.steps[0]).toEqual({ id: 'a', agent: 'a', prompt: 'one', chain: ['one', 'two'] });
    expect(w.steps[1]).toEqual({ id: 'b', agent: 'a', prompt: 'only' });
    expect(problems('id: x\nsteps:\n  - { id: a, agent: a, prompt: [] }\n')).toHaveLength(1);
  });

  it('reports an unknown key at its path', () => {
    expect(problems(`id: x\nstep: []\nsteps:\n${step(', promt: typo')}`)).toEqual([
      `${F}: steps[0].promt: unknown key`,
      `${F}: step: unknown key`,
    ]);
  });

  it('reports an unknown agent when the agents are known', () => {
    expect(problems(`id: x\nsteps:\n${step()}`, ['claude', 'codex'])).toEqual([
      `${F}: steps[0].agent: unknown agent "a" (known: claude, codex)`,
    ]);
  });

  it('reports a duplicate step id', () => {
    expect(problems(`id: x\nsteps:\n${step()}\n${step()}`)).toEqual([
      `${F}: steps[1].id: duplicate step id "s1" (also steps[0])`,
    ]);
  });

  it('reports a loop.backTo that does not exist', () => {
    expect(problems(`id: x\nsteps:\n${step(', loop: { backTo: nowhere, max: 2 }')}`)).toEqual([
      `${F}: steps[0].loop.backTo: no step "nowhere"`,
    ]);
  });

  it('reports a loop.backTo that is not earlier', () => {
    const yaml = `id: x\nsteps:\n${step(', loop: { backTo: s2, max: 2 }')}\n  - { id: s2, agent: a, prompt: p }`;
    expect(problems(yaml)).toEqual([
      `${F}: steps[0].loop.backTo: step "s2" is not earlier than this step`,
    ]);
    expect(problems(`id: x\nsteps:\n${step(', loop: { backTo: s1, max: 2 }')}`)).toEqual([
      `${F}: steps[0].loop.backTo: step "s1" is not earlier than this step`,
    ]);
  });

  it('reports a bad duration', () => {
    expect(
      problems(
        `id: x\nsteps:\n${step(', timeout: 5 minutes, retries: { count: 1, backoff: 0s }')}`,
      ),
    ).toEqual([
      `${F}: steps[0].retries.backoff: not a duration: use an integer and a unit: 500ms, 30s, 5m, 2h or 1d`,
      `${F}: steps[0].timeout: not a duration: use an integer and a unit: 500ms, 30s, 5m, 2h or 1d`,
    ]);
  });

  it('reports empty steps', () => {
    expect(problems('id: x\nsteps: []')).toEqual([
      `${F}: steps: a workflow needs at least one step`,
    ]);
  });

  it('reports a missing prompt, and prompt together with promptFile', () => {
    expect(problems('id: x\nsteps:\n  - { id: s1, agent: a }')).toEqual([
      `${F}: steps[0].prompt: is required (or promptFile)`,
    ]);
    expect(problems(`id: x\nsteps:\n${step(', promptFile: p.md')}`)).toEqual([
      `${F}: steps[0]: give either prompt or promptFile, not both`,
    ]);
  });

  it('reports tracks and conditions a step uses but the workflow does not declare', () => {
    expect(
      problems(`id: x\ntracks: [a]\nsteps:\n${step(', tracks: [b], conditions: [c]')}`),
    ).toEqual([
      `${F}: steps[0].tracks: "b" is not declared in the top-level tracks`,
      `${F}: steps[0].conditions: "c" is not declared in the top-level conditions`,
    ]);
  });

  it('reports onExpiry without expiresIn, and bad checkpoint values', () => {
    expect(
      problems(
        `id: x\nsteps:\n${step(', checkpoint: { when: later, approvals: 0, onExpiry: approve }')}`,
      ),
    ).toEqual([
      `${F}: steps[0].checkpoint.when: Invalid option: expected one of "before"|"after"`,
      `${F}: steps[0].checkpoint.approvals: Too small: expected number to be >=1`,
      `${F}: steps[0].checkpoint.onExpiry: has no effect without expiresIn`,
    ]);
  });

  it('reports a missing id and an id that could not be part of a job id', () => {
    expect(problems('steps:\n  - { id: "a:b", agent: a, prompt: p }')).toEqual([
      `${F}: id: is required`,
      `${F}: steps[0].id: must start with a letter or digit and use only letters, digits, _ . -`,
    ]);
  });

  it('lists every problem at once', () => {
    const yaml = `id: x\nextra: 1\nsteps:\n${step(', timeout: soon')}\n${step(', loop: { backTo: zz, max: 1 }')}`;
    expect(problems(yaml, ['b'])).toHaveLength(6);
  });

  it('reports YAML syntax errors', () => {
    expect(problems('id: x\nid: y\nsteps: []')).toEqual([
      `${F}: (root): YAML error: Map keys must be unique at line 2, column 1`,
    ]);
  });

  it('reports a document that is not a mapping', () => {
    expect(problems('- just\n- a list')).toEqual([
      `${F}: (root): Invalid input: expected object, received array`,
    ]);
  });
});

describe('promptFile and loadWorkflow', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-wf-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads promptFile relative to the workflow file; its content is part of the version', async () => {
    fs.mkdirSync(path.join(dir, 'prompts'));
    fs.writeFileSync(path.join(dir, 'prompts', 'plan.md'), 'Plan carefully.\n');
    const file = path.join(dir, 'x.workflow.yaml');
    fs.writeFileSync(
      file,
      'id: x\nsteps:\n  - { id: plan, agent: a, promptFile: prompts/plan.md }\n',
    );
    const w1 = await loadWorkflow(file);
    expect(w1.steps[0]).toMatchObject({
      prompt: 'Plan carefully.\n',
      promptFile: 'prompts/plan.md',
    });
    fs.writeFileSync(path.join(dir, 'prompts', 'plan.md'), 'Plan quickly.\n');
    const w2 = await loadWorkflow(file);
    expect(w2.version).not.toBe(w1.version);
  });

  it('reports an unreadable promptFile', async () => {
    const file = path.join(dir, 'x.workflow.yaml');
    fs.writeFileSync(file, 'id: x\nsteps:\n  - { id: plan, agent: a, promptFile: missing.md }\n');
    await expect(loadWorkflow(file)).rejects.toThrow(
      new RegExp(`${file}: steps\\[0\\]\\.promptFile: cannot read "missing.md": ENOENT`),
    );
  });

  it('throws NotFoundError for a missing workflow file', async () => {
    await expect(loadWorkflow(path.join(dir, 'nope.workflow.yaml'))).rejects.toBeInstanceOf(
      NotFoundError,
    );
  });

  it('checks agents when loading', async () => {
    const file = path.join(dir, 'x.workflow.yaml');
    fs.writeFileSync(file, `id: x\nsteps:\n${step()}\n`);
    await expect(loadWorkflow(file, { knownAgents: ['b'] })).rejects.toThrow(/unknown agent "a"/);
  });
});
