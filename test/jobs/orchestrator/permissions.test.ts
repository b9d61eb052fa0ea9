/** A step's permission posture through the orchestrator: the argv a real process receives. */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ALICE, makeEnv, type TestEnv } from './helpers.ts';

let env: TestEnv | undefined;
let argsFile = '';
const savedPath = process.env.PATH;

/** Puts a `claude` on PATH that records its argv and prints a successful Claude result. */
function fakeClaude(dir: string): void {
  const bin = path.join(dir, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  argsFile = path.join(dir, 'claude-args.jsonl');
  const script = `#!${process.execPath}
require('node:fs').appendFileSync(${JSON.stringify(argsFile)}, JSON.stringify(process.argv.slice(2)) + '\\n');
console.log(JSON.stringify({ type: 'result', subtype: 'success', is_error: false, result: 'done' }));
`;
  fs.writeFileSync(path.join(bin, 'claude'), script, { mode: 0o755 });
  process.env.PATH = `${bin}${path.delimiter}${savedPath ?? ''}`;
}

function recordedArgs(): string[][] {
  if (!fs.existsSync(argsFile)) return [];
  return fs
    .readFileSync(argsFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as string[]);
}

beforeEach(async () => {
  env = await makeEnv();
  fakeClaude(env.dir);
  await env.repos.agents.add({ name: 'cl', engine: 'claude' });
});
afterEach(async () => {
  process.env.PATH = savedPath;
  await env?.dispose();
  env = undefined;
});

async function runWorkflow(yaml: string) {
  env!.workflow('w', yaml);
  const o = await env!.open();
  const run = await o.startRun({
    workflow: 'w',
    workspace: env!.workspace,
    spec: 's',
    actor: ALICE,
  });
  return o.waitUntilIdle(run.id);
}

describe('permission posture of a step', () => {
  it('full is refused until an admin allows it in the workspace, then runs with bypassPermissions', async () => {
    const yaml =
      'id: w\nsteps:\n  - id: deploy\n    agent: cl\n    prompt: go\n    permissions: full\n';
    const refused = await runWorkflow(yaml);
    expect(refused.status).toBe('blocked');
    expect(refused.steps[0]!.error).toContain(
      'asks for permissions: full, which is not allowed in',
    );
    expect(refused.steps[0]!.error).toContain('phasebridge agents allow-full');
    expect(recordedArgs()).toEqual([]);

    await env!.repos.fullAccess.allow(env!.workspace, 'cli:admin');
    const allowed = await runWorkflow(yaml);
    expect(allowed.status).toBe('completed');
    expect(recordedArgs()).toEqual([
      [
        '-p',
        '--output-format',
        'stream-json',
        '--verbose',
        '--permission-mode',
        'bypassPermissions',
      ],
    ]);
  });

  it('a planning step without a posture runs read-only (plan), a build step with acceptEdits', async () => {
    const state = await runWorkflow(
      'id: w\nsteps:\n  - id: plan\n    agent: cl\n    prompt: p\n  - id: build\n    agent: cl\n    prompt: b\n',
    );
    expect(state.status).toBe('completed');
    expect(recordedArgs().map((a) => a.slice(4))).toEqual([
      ['--permission-mode', 'plan'],
      ['--permission-mode', 'acceptEdits'],
    ]);
  });

  it("tool lists from the workflow reach Claude's --allowedTools/--disallowedTools", async () => {
    await runWorkflow(
      "id: w\nsteps:\n  - id: build\n    agent: cl\n    prompt: b\n    permissions:\n      mode: edit\n      allow: ['Bash(npm test)']\n      deny: [WebFetch]\n",
    );
    expect(recordedArgs()[0]!.slice(4)).toEqual([
      '--permission-mode',
      'acceptEdits',
      '--allowedTools',
      'Bash(npm test)',
      '--disallowedTools',
      'WebFetch',
    ]);
  });

  it('ask: Claude gets the approval MCP server of this bridge in a per-attempt --mcp-config', async () => {
    const state = await runWorkflow(
      'id: w\nsteps:\n  - id: build\n    agent: cl\n    prompt: b\n    permissions: ask\n',
    );
    expect(state.status).toBe('completed');
    const args = recordedArgs()[0]!;
    expect(args.slice(4, 8)).toEqual(['--permission-mode', 'default', '--mcp-config', args[7]]);
    expect(args.slice(8)).toEqual(['--permission-prompt-tool', 'mcp__phasebridge__approve']);
    const config = JSON.parse(fs.readFileSync(args[7]!, 'utf8'));
    expect(fs.statSync(args[7]!).mode & 0o777).toBe(0o600);
    expect(config.mcpServers.phasebridge).toEqual({
      type: 'stdio',
      command: process.execPath,
      args: [
        expect.stringMatching(/bin\/phasebridge\.js$/),
        'approval-server',
        '--run',
        state.id,
        '--step',
        'build',
        '--attempt',
        '1',
      ],
      env: { PHASEBRIDGE_HOME: env!.home, LOG_LEVEL: 'silent' },
    });
  });

  it("ask's expiresIn (workflow step, or named agent) reaches the approval server as --expires-in", async () => {
    const state = await runWorkflow(
      'id: w\nsteps:\n  - id: build\n    agent: cl\n    prompt: b\n    permissions: {mode: ask, fourEyes: true, expiresIn: 5m}\n',
    );
    expect(state.status).toBe('completed');
    const server = (args: string[]) =>
      JSON.parse(fs.readFileSync(args[7]!, 'utf8')).mcpServers.phasebridge.args.slice(-2);
    expect(server(recordedArgs()[0]!)).toEqual(['--expires-in', '300000ms']);

    await env!.repos.agents.add({
      name: 'asker',
      engine: 'claude',
      permissions: { posture: 'ask', expiresInMs: 90_000 },
    });
    await runWorkflow('id: w\nsteps:\n  - id: build\n    agent: asker\n    prompt: b\n');
    expect(server(recordedArgs()[1]!)).toEqual(['--expires-in', '90000ms']);
  });

  it('fourEyes or expiresIn on a posture other than ask is refused, and nothing runs', async () => {
    await expect(
      runWorkflow(
        'id: w\nsteps:\n  - id: build\n    agent: cl\n    prompt: b\n    permissions: {mode: edit, fourEyes: true}\n',
      ),
    ).rejects.toThrow(/fourEyes and expiresIn apply to tool approvals: they need mode "ask"/);
    expect(recordedArgs()).toEqual([]);
  });
});
