import { describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/errors.ts';
import { buildArgv } from '../../../src/jobs/runner/agent-argv.ts';
import {
  type AgentPermissions,
  assertSupported,
  defaultPosture,
  effectivePermissions,
  POSTURE_FLAGS,
} from '../../../src/jobs/runner/permissions.ts';
import type { AgentDefinition } from '../../../src/jobs/runner/types.ts';

const ctx = {
  runId: '2026-11-29T143000Z-add-login',
  stepId: 'build',
  attempt: 1,
  workspace: '/ws',
  prompt: 'p',
  specFile: '/ws/spec.md',
  directiveFile: '/ws/directive.json',
  logFile: '/runs/x/logs/build-1.log',
  mcpConfig: '/runs/x/logs/mcp-build-1.json',
};

function argvOf(engine: 'claude' | 'codex', permissions: AgentPermissions): string[] {
  const agent: AgentDefinition = { name: 'a', engine, argv: [], env: {}, permissions };
  const cmd = buildArgv(agent, ctx);
  return [cmd.file, ...cmd.args];
}

describe('the posture table drives the argv', () => {
  it('claude read-only → --permission-mode plan', () => {
    expect(argvOf('claude', { posture: 'read-only' })).toEqual([
      'claude',
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--permission-mode',
      'plan',
    ]);
  });
  it('claude edit → --permission-mode acceptEdits', () => {
    expect(argvOf('claude', { posture: 'edit' })).toContain('acceptEdits');
    expect(argvOf('claude', { posture: 'edit' }).slice(5)).toEqual([
      '--permission-mode',
      'acceptEdits',
    ]);
  });
  it('claude full → --permission-mode bypassPermissions', () => {
    expect(argvOf('claude', { posture: 'full' }).slice(5)).toEqual([
      '--permission-mode',
      'bypassPermissions',
    ]);
  });
  it('claude ask → the approval MCP server as permission prompt tool', () => {
    expect(argvOf('claude', { posture: 'ask' }).slice(5)).toEqual([
      '--permission-mode',
      'default',
      '--mcp-config',
      ctx.mcpConfig,
      '--permission-prompt-tool',
      'mcp__phasebridge__approve',
    ]);
  });
  it('claude allow/deny lists → one --allowedTools / --disallowedTools per tool', () => {
    const argv = argvOf('claude', {
      posture: 'edit',
      allow: ['Bash(npm test)', 'Read'],
      deny: ['Bash(git push:*)'],
    });
    expect(argv.slice(5)).toEqual([
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash(npm test)',
      '--allowedTools',
      'Read',
      '--disallowedTools',
      'Bash(git push:*)',
    ]);
  });
  it('codex read-only → --sandbox read-only, before the stdin marker', () => {
    expect(argvOf('codex', { posture: 'read-only' })).toEqual([
      'codex',
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--sandbox',
      'read-only',
      '-',
    ]);
  });
  it('codex edit → --sandbox workspace-write', () => {
    expect(argvOf('codex', { posture: 'edit' }).slice(4, 6)).toEqual([
      '--sandbox',
      'workspace-write',
    ]);
  });
  it('codex full → --sandbox danger-full-access', () => {
    expect(argvOf('codex', { posture: 'full' }).slice(4, 6)).toEqual([
      '--sandbox',
      'danger-full-access',
    ]);
  });
  it('codex ask and codex tool lists are refused with a clear message, never weakened', () => {
    expect(POSTURE_FLAGS.codex.ask).toBeNull();
    let ask: unknown = null;
    try {
      assertSupported('codex', { posture: 'ask' }, 'agent c');
    } catch (e) {
      ask = e;
    }
    expect(hasCode(ask, 'INVALID_INPUT')).toBe(true);
    expect(String(ask)).toMatch(/"ask" needs the claude engine .*sandbox modes only/);
    expect(() => assertSupported('codex', { posture: 'edit', allow: ['x'] }, 'agent c')).toThrow(
      /claude engine only/,
    );
    expect(() => argvOf('codex', { posture: 'ask' })).toThrow(/not possible with codex/);
  });
  it('ask is supported for claude', () => {
    expect(() => assertSupported('claude', { posture: 'ask' }, 'agent c')).not.toThrow();
  });
  it('a command agent gets no flags whatever its posture', () => {
    const agent: AgentDefinition = {
      name: 'c',
      engine: 'command',
      argv: ['lint'],
      env: {},
      permissions: { posture: 'full' },
    };
    expect(buildArgv(agent, ctx).args).toEqual([]);
  });
});

describe('which posture a step runs with', () => {
  it('planning and review steps default to read-only, others to edit', () => {
    expect(defaultPosture('plan', 'builder')).toBe('read-only');
    expect(defaultPosture('build', 'code-reviewer')).toBe('read-only');
    expect(defaultPosture('build', 'builder')).toBe('edit');
  });
  it("the step's own posture wins over the agent's, the agent's over the default", () => {
    expect(effectivePermissions({ posture: 'ask' }, { posture: 'full' }, 'build', 'a')).toEqual({
      posture: 'ask',
    });
    expect(effectivePermissions(undefined, { posture: 'full' }, 'plan', 'a')).toEqual({
      posture: 'full',
    });
    expect(effectivePermissions(undefined, undefined, 'review', 'a')).toEqual({
      posture: 'read-only',
    });
  });
});
