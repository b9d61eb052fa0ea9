import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { hasCode } from '../../../src/errors.ts';
import { buildArgv, promptFilePath } from '../../../src/jobs/runner/agent-argv.ts';
import type { AgentDefinition } from '../../../src/jobs/runner/types.ts';

const ctx = {
  runId: '2026-11-29T143000Z-add-login',
  stepId: 'build',
  attempt: 2,
  workspace: '/ws',
  prompt: 'secret plan; rm -rf /',
  specFile: '/ws/spec.md',
  directiveFile: '/ws/directive.json',
  logFile: '/runs/x/logs/build-2.log',
};
const agent = (over: Partial<AgentDefinition>): AgentDefinition => ({
  name: 'a',
  engine: 'command',
  argv: [],
  env: {},
  ...over,
});

describe('buildArgv', () => {
  it('claude: the default stream-json argv with the prompt on stdin', () => {
    expect(buildArgv(agent({ engine: 'claude' }), ctx)).toEqual({
      file: 'claude',
      args: ['-p', '--output-format', 'stream-json', '--verbose'],
      stdin: ctx.prompt,
      promptFile: null,
    });
  });

  it('claude: model and extra flags are added to the default', () => {
    const cmd = buildArgv(
      agent({ engine: 'claude', model: 'opus', argv: ['--permission-mode', 'acceptEdits'] }),
      ctx,
    );
    expect(cmd.args).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--model',
      'opus',
      '--permission-mode',
      'acceptEdits',
    ]);
  });

  it('codex: exec --json [--model M] - with the prompt on stdin', () => {
    const cmd = buildArgv(
      agent({ engine: 'codex', model: 'gpt-5-codex', argv: ['--full-auto'] }),
      ctx,
    );
    expect(cmd).toMatchObject({ file: 'codex', stdin: ctx.prompt });
    expect(cmd.args).toEqual([
      'exec',
      '--json',
      '--skip-git-repo-check',
      '--model',
      'gpt-5-codex',
      '--full-auto',
      '-',
    ]);
  });

  it('claude/codex: an argv starting with a binary overrides the default', () => {
    const cmd = buildArgv(
      agent({ engine: 'codex', argv: ['/opt/codex', 'exec', '--json', '-'] }),
      ctx,
    );
    expect(cmd).toMatchObject({ file: '/opt/codex', args: ['exec', '--json', '-'] });
  });

  it('command: argv as given, placeholders substituted, prompt on stdin', () => {
    const cmd = buildArgv(
      agent({
        argv: [
          'run-agent',
          '--spec={specFile}',
          '{directiveFile}',
          '{workspace}',
          '{runId}/{stepId}/{attempt}',
          '{other}',
        ],
      }),
      ctx,
    );
    expect(cmd).toEqual({
      file: 'run-agent',
      args: ['--spec=/ws/spec.md', '/ws/directive.json', '/ws', `${ctx.runId}/build/2`, '{other}'],
      stdin: ctx.prompt,
      promptFile: null,
    });
  });

  it('promptVia file: appends the prompt file path and sends nothing on stdin', () => {
    const cmd = buildArgv(agent({ argv: ['tool', '--go'], promptVia: 'file' }), ctx);
    const file = path.join('/runs/x/logs', 'prompt-build-2.md');
    expect(cmd).toEqual({ file: 'tool', args: ['--go', file], stdin: null, promptFile: file });
  });

  it('promptVia file: {promptFile} is substituted instead of appended', () => {
    const cmd = buildArgv(
      agent({ argv: ['tool', '--prompt-file={promptFile}', '-v'], promptVia: 'file' }),
      ctx,
    );
    expect(cmd.args).toEqual([
      `--prompt-file=${path.join('/runs/x/logs', 'prompt-build-2.md')}`,
      '-v',
    ]);
  });

  it('claude with promptVia file still reads stdin (claude takes an argument as the prompt text)', () => {
    const cmd = buildArgv(agent({ engine: 'claude', promptVia: 'file' }), ctx);
    expect(cmd.stdin).toBe(ctx.prompt);
    expect(cmd.promptFile).not.toBeNull();
    expect(cmd.args).not.toContain(cmd.promptFile);
  });

  it('never puts the prompt into argv: {prompt} is refused', () => {
    for (const argv of [
      ['x', '{prompt}'],
      ['x', '--p={prompt}'],
    ]) {
      let err: unknown;
      try {
        buildArgv(agent({ argv }), ctx);
      } catch (e) {
        err = e;
      }
      expect(hasCode(err, 'INVALID_INPUT')).toBe(true);
    }
    expect(buildArgv(agent({ argv: ['x', '{specFile}'] }), ctx).args.join(' ')).not.toContain(
      'secret plan',
    );
  });

  it('an empty command argv is refused', () => {
    expect(() => buildArgv(agent({ argv: [] }), ctx)).toThrow(/argv is empty/);
  });
});

describe('promptFilePath', () => {
  it('keeps step ids from escaping the log folder', () => {
    expect(promptFilePath({ logFile: '/l/a.log', stepId: '../../etc/x', attempt: 1 })).toBe(
      '/l/prompt-.._.._etc_x-1.md',
    );
  });
});
