import { describe, expect, it } from 'vitest';
import {
  acceptsJob,
  definitionOfJob,
  jobAgentOf,
} from '../../../src/jobs/orchestrator/job-agent.ts';
import {
  PAYLOAD_VERSION,
  parseStepJobPayload,
} from '../../../src/jobs/orchestrator/job-payload.ts';

const payload = {
  v: PAYLOAD_VERSION,
  kind: 'step',
  stepId: 'build',
  workspace: { mode: 'shared', path: '/ws' },
  layout: 'native',
  agent: { name: 'coder', engine: 'claude', argv: [], env: ['ANTHROPIC_API_KEY'] },
  prompt: 'go',
};

describe('self-contained job payloads', () => {
  it('a payload of another version is refused with what to do', () => {
    expect(() => parseStepJobPayload({ ...payload, v: 1 })).toThrow(
      /job payload version 1 is not 2: run the same phasebridge version/,
    );
    const { v: _v, ...old } = payload;
    expect(() => parseStepJobPayload(old)).toThrow(/version 1 \(no version\)/);
  });

  it("carries the reviewers' feedback and the session to resume, so a remote worker has them", () => {
    const feedback = [
      {
        kind: 'changes',
        by: 'Bob',
        byId: 'cli:bob',
        at: '2026-01-01T00:00:00Z',
        text: 'add tests',
        fresh: true,
      },
    ];
    const p = parseStepJobPayload({ ...payload, feedback, resumeSession: 'sess-1' });
    expect(p.feedback).toEqual(feedback);
    expect(p.resumeSession).toBe('sess-1');
    expect(() =>
      parseStepJobPayload({ ...payload, feedback: [{ ...feedback[0], kind: 'praise' }] }),
    ).toThrow(/bad job payload/);
  });

  it('a git workspace reference must name a full commit and a run branch', () => {
    const git = { mode: 'git', path: '/ws', repo: '/r.git', branch: 'phasebridge/r1' };
    expect(() =>
      parseStepJobPayload({ ...payload, workspace: { ...git, baseCommit: 'HEAD' } }),
    ).toThrow(/full commit id/);
    const ok = parseStepJobPayload({
      ...payload,
      workspace: { ...git, baseCommit: 'a'.repeat(40) },
    });
    expect(ok.workspace.mode).toBe('git');
  });

  it('carries env names, never values; a worker fills them from what it is given', () => {
    const agent = jobAgentOf(
      { name: 'coder', engine: 'claude', argv: ['--x'], env: { ANTHROPIC_API_KEY: 'sk-secret' } },
      false,
    );
    expect(JSON.stringify(agent)).not.toContain('sk-secret');
    expect(agent.env).toEqual(['ANTHROPIC_API_KEY']);
    expect(definitionOfJob(agent, {}).env).toEqual({}); // remote: inherits its own env
    expect(definitionOfJob(agent, { ANTHROPIC_API_KEY: 'k', OTHER: 'o' }).env).toEqual({
      ANTHROPIC_API_KEY: 'k',
    });
  });

  it('a worker takes only jobs of its engines whose runsOn labels it carries', () => {
    const gpu = { ...payload, runsOn: ['gpu'] };
    expect(acceptsJob(gpu, { labels: [] })).toBe(false);
    expect(acceptsJob(gpu, { labels: ['gpu', 'big'] })).toBe(true);
    expect(acceptsJob(payload, { labels: [], engines: ['codex'] })).toBe(false);
    expect(acceptsJob(payload, { labels: [], engines: ['claude', 'codex'] })).toBe(true);
    // Unreadable payloads are taken, so they fail with the reason instead of waiting for ever.
    expect(acceptsJob({ v: 1 }, { labels: [], engines: ['codex'] })).toBe(true);
  });
});
