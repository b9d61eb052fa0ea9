import { describe, expect, it } from 'vitest';
import {
  claudeAnswer,
  matchesRule,
  ruleFor,
  summarize,
} from '../../../src/jobs/runner/approvals/protocol.ts';

describe('what a person is shown of a permission request', () => {
  it('the command, or the file with a diff summary, or the input as JSON', () => {
    expect(summarize({ toolName: 'Bash', input: { command: 'git push origin main' } })).toBe(
      'Bash: git push origin main',
    );
    expect(
      summarize({ toolName: 'Write', input: { file_path: 'src/a.ts', content: 'a\nb\nc' } }),
    ).toBe('Write src/a.ts (+3 lines)');
    expect(
      summarize({
        toolName: 'Edit',
        input: { file_path: 'src/a.ts', old_string: 'x', new_string: 'y\nz' },
      }),
    ).toBe('Edit src/a.ts (-1 +2 lines)');
    expect(summarize({ toolName: 'mcp__db__query', input: { sql: 'select 1' } })).toBe(
      'mcp__db__query {"sql":"select 1"}',
    );
  });
});

describe('Allow for this run', () => {
  it('covers that command prefix for shell commands, else that tool', () => {
    const npm = { toolName: 'Bash', input: { command: 'npm test' } };
    expect(ruleFor(npm)).toBe('Bash:npm');
    expect(matchesRule('Bash:npm', { toolName: 'Bash', input: { command: 'npm run lint' } })).toBe(
      true,
    );
    expect(matchesRule('Bash:npm', { toolName: 'Bash', input: { command: 'rm -rf /' } })).toBe(
      false,
    );
    expect(matchesRule('Write', { toolName: 'Write', input: { file_path: 'b.ts' } })).toBe(true);
    expect(matchesRule('Write', { toolName: 'Edit', input: { file_path: 'b.ts' } })).toBe(false);
  });
});

describe("Claude's permission-prompt-tool answer", () => {
  it('allow carries the input unchanged; deny carries the message', () => {
    const req = { toolName: 'Bash', input: { command: 'npm test' } };
    expect(JSON.parse(claudeAnswer({ allow: true }, req))).toEqual({
      behavior: 'allow',
      updatedInput: { command: 'npm test' },
    });
    expect(JSON.parse(claudeAnswer({ allow: false, message: 'no' }, req))).toEqual({
      behavior: 'deny',
      message: 'no',
    });
  });
});
