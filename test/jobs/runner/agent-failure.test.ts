import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseEngineLine } from '../../../src/jobs/runner/failure/engine-events.ts';
import { runAgent } from '../../../src/jobs/runner/run-agent.ts';
import type { AgentDefinition } from '../../../src/jobs/runner/types.ts';
import { fixture, invocation, makeTempRun, type TempRun } from './helpers.ts';

let run: TempRun;
beforeEach(() => {
  run = makeTempRun();
});
afterEach(() => run.cleanup());

/** A `command` agent replaying a stream recorded from the real CLI (see fixtures/). */
function replay(stdout: string, stderr: string, end: string): AgentDefinition {
  const args = [
    fixture('replay-stream.mjs'),
    fixture(stdout),
    stderr === '-' ? '-' : fixture(stderr),
    end,
  ];
  return { name: 'replay', engine: 'command', argv: [process.execPath, ...args], env: {} };
}

describe('a failed step says what the agent said, not only its exit code', () => {
  it('Claude not logged in: its result text, its error code, the exit code and the fix', async () => {
    const out = await runAgent(replay('claude-not-logged-in.jsonl', '-', '1'), invocation(run));
    expect(out.ok).toBe(false);
    expect(out.failure).toBe(
      'exit code 1: Not logged in · Please run /login (authentication_failed) — fix: not logged in: ' +
        'run `claude /login` (or set ANTHROPIC_API_KEY) as the user that runs the worker',
    );
  });

  it('Codex offline until the timeout: the timeout says it was waiting for the network', async () => {
    const out = await runAgent(
      replay('codex-offline.jsonl', 'codex-offline.stderr', 'hang'),
      invocation(run, { timeoutMs: 1000 }),
    );
    expect(out.timedOut).toBe(true);
    expect(out.failure).toMatch(
      /^timed out after 1s; last: waiting for network: Connection failed: error sending request — fix: no network/,
    );
  });

  it('an agent without engine events: its last stderr lines', async () => {
    const agent: AgentDefinition = {
      name: 'sh',
      engine: 'command',
      argv: [
        process.execPath,
        '-e',
        'console.error("loading config");console.error("");console.error("\\u001b[31merror: no such model gpt-9\\u001b[0m");process.exit(2)',
      ],
      env: {},
    };
    const out = await runAgent(agent, invocation(run));
    expect(out.failure).toBe('exit code 2: loading config / error: no such model gpt-9');
  });

  it("Claude's permission denials name the tools it was refused", async () => {
    const result = JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: 'I could not write the file.',
      permission_denials: [
        { tool_name: 'Write', tool_use_id: 't1', tool_input: { file_path: '/ws/login.ts' } },
        { tool_name: 'Bash', tool_use_id: 't2', tool_input: { command: 'npm test' } },
      ],
    });
    const agent: AgentDefinition = {
      name: 'denied',
      engine: 'command',
      argv: [process.execPath, '-e', `console.log(${JSON.stringify(result)});process.exit(1)`],
      env: {},
    };
    const out = await runAgent(agent, invocation(run));
    expect(out.failure).toMatch(
      /^exit code 1: denied tools: Write\(\/ws\/login\.ts\), Bash\(npm test\) — fix: the agent was refused tools/,
    );
  });
});

describe('parseEngineLine', () => {
  it("reads Codex's turn.failed and a fatal error event as errors, Reconnecting as activity", () => {
    expect(
      parseEngineLine(
        '{"type":"turn.failed","error":{"message":"stream error: 401 Unauthorized"}}',
      ),
    ).toEqual([{ kind: 'error', text: 'stream error: 401 Unauthorized' }]);
    expect(parseEngineLine('{"type":"error","message":"quota exceeded"}')).toEqual([
      { kind: 'error', text: 'quota exceeded' },
    ]);
    expect(parseEngineLine('{"type":"error","message":"Reconnecting... 2/5 (x)"}')).toEqual([
      { kind: 'activity', text: 'Reconnecting... 2/5 (x)' },
    ]);
    expect(parseEngineLine('plain text')).toEqual([]);
  });
});
