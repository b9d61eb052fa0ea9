import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { activityOf, MAX_ACTIVITY_CHARS } from '../../../src/jobs/runner/telemetry/activity.ts';
import { fixture } from './helpers.ts';

const lines = (name: string): string[] =>
  fs.readFileSync(fixture(name), 'utf8').trimEnd().split('\n');
const WS = '/tmp/ws';

/** A Claude stream-json assistant event calling one tool. */
const claudeTool = (name: string, input: object): string =>
  JSON.stringify({
    type: 'assistant',
    message: { role: 'assistant', content: [{ type: 'tool_use', id: 't', name, input }] },
    session_id: 's',
  });

describe('activity from Claude stream-json', () => {
  it('names the tool call in words, with paths relative to the workspace', () => {
    expect(activityOf(claudeTool('Edit', { file_path: '/tmp/ws/src/login.ts' }), WS)).toBe(
      'editing src/login.ts',
    );
    expect(activityOf(claudeTool('Write', { file_path: 'docs/a.md' }), WS)).toBe(
      'writing docs/a.md',
    );
    expect(activityOf(claudeTool('Read', { file_path: '/etc/hosts' }), WS)).toBe(
      'reading /etc/hosts',
    );
    expect(activityOf(claudeTool('Bash', { command: 'npm test' }), WS)).toBe('running npm test');
    expect(activityOf(claudeTool('Grep', { pattern: 'TODO' }), WS)).toBe('searching TODO');
    expect(activityOf(claudeTool('mcp__db__query', {}), WS)).toBe('using mcp__db__query');
  });

  it('says nothing for events without a tool call (the recorded stream has none)', () => {
    for (const line of lines('claude-stream-json.jsonl'))
      expect(activityOf(line, WS)).toBe(undefined);
    expect(activityOf('plain output mentioning tool_use', WS)).toBe(undefined);
  });

  it('keeps a long command to one short line', () => {
    const words = activityOf(claudeTool('Bash', { command: `echo ${'x'.repeat(200)}\nls` }), WS)!;
    expect(words.length).toBe(MAX_ACTIVITY_CHARS);
    expect(words.endsWith('…')).toBe(true);
    expect(words).not.toContain('\n');
  });
});

describe('activity from codex exec --json', () => {
  it('shows commands as they start and file changes once made', () => {
    const shown = lines('codex-exec-items.jsonl')
      .map((l) => activityOf(l, WS))
      .filter((a) => a !== undefined);
    expect(shown).toEqual(['thinking', 'running npm test', 'editing src/login.ts and 1 more']);
  });

  it('reads the recorded codex stream the same way', () => {
    const shown = lines('codex-exec-json.jsonl').map((l) => activityOf(l, WS));
    expect(shown.filter((a) => a !== undefined)).toEqual(['thinking', 'running ls src']);
  });
});
