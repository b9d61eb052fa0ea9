import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAgent } from '../../../src/jobs/runner/run-agent.ts';
import { demoAgent, invocation, makeTempRun, scriptAgent, type TempRun } from './helpers.ts';

let run: TempRun;
beforeEach(() => {
  run = makeTempRun();
});
afterEach(() => run.cleanup());

describe('runAgent: a successful agent', () => {
  it('reports progress, writes a headed log to every log file and parses telemetry', async () => {
    const progress: string[] = [];
    const pids: number[] = [];
    const extraLog = path.join(run.workspace, '.codemachine', 'logs', 'agent-1.log');
    const out = await runAgent(
      demoAgent(),
      invocation(run, {
        prompt: 'Build the login page.\ndemo: sleep=60 progress=3',
        extraLogFiles: [extraLog],
        onProgress: (t) => progress.push(t),
        onSpawn: (pid) => pids.push(pid),
      }),
    );

    expect(out).toMatchObject({
      ok: true,
      exitCode: 0,
      signal: null,
      timedOut: false,
      cancelled: false,
    });
    expect(out.failure).toBeUndefined();
    expect(out.directive).toEqual({ action: 'continue' });
    expect(progress).toEqual(['step 1/3', 'step 2/3', 'step 3/3']);
    expect(pids).toHaveLength(1);

    const log = fs.readFileSync(run.logFile, 'utf8');
    const lines = log.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^\[phasebridge\] \S+Z start agent=demo run=2026-11-29T143000Z-add-login step=build attempt=1 /,
    );
    expect(lines[0]).toContain(JSON.stringify([process.execPath]).slice(1, -1));
    expect(log).toContain('demo-agent: prompt (47 chars): Build the login page.');
    expect(log).toContain('demo-agent: spec: # Add a login page');
    expect(log).toContain('::progress step 2/3');
    expect(lines.at(-1)).toMatch(/^\[phasebridge\] \S+Z end exit=0 signal=null duration=\d+ms$/);
    expect(fs.readFileSync(extraLog, 'utf8')).toBe(log);

    // The demo prints a Claude-like result event: 40 + ceil(47/4) input + 1024 cache reads.
    expect(out.telemetry).toMatchObject({
      tokensIn: 52 + 1024,
      cachedTokens: 1024,
      tokensOut: 150,
    });
    expect(out.telemetry.costUsd).toBeGreaterThan(0);
    expect(out.outputTail.at(-1)).toContain('"type":"result"');
    expect(out.outputTruncated).toBe(false);
  });

  it('appends to an existing log instead of overwriting it', async () => {
    fs.mkdirSync(path.dirname(run.logFile), { recursive: true });
    fs.writeFileSync(run.logFile, 'earlier attempt\n');
    await runAgent(demoAgent(), invocation(run, { prompt: 'demo: sleep=0' }));
    expect(fs.readFileSync(run.logFile, 'utf8')).toMatch(/^earlier attempt\n\[phasebridge\] /);
  });
});

describe('runAgent: failures come back as outcomes, never as throws', () => {
  it('a non-zero exit fails with the exit code', async () => {
    const out = await runAgent(demoAgent(), invocation(run, { prompt: 'demo: sleep=0 exit=3' }));
    expect(out).toMatchObject({
      ok: false,
      exitCode: 3,
      failure: 'exit code 3: demo agent failed',
      timedOut: false,
    });
    expect(out.outputTail).toContain('demo-agent: failing with exit code 3');
    expect(out.directive).toEqual({ action: 'continue' });
  });

  it('a missing binary fails with "agent binary not found"', async () => {
    const agent = {
      name: 'ghost',
      engine: 'command' as const,
      argv: ['pb-no-such-agent-binary'],
      env: {},
    };
    const out = await runAgent(agent, invocation(run));
    expect(out).toMatchObject({ ok: false, exitCode: null, directive: null });
    expect(out.failure).toBe(
      "agent binary not found: pb-no-such-agent-binary — fix: put pb-no-such-agent-binary on the worker's PATH or give its absolute path in argv",
    );
    expect(fs.readFileSync(run.logFile, 'utf8')).toContain('agent binary not found');
  });

  it('a claude agent whose binary is absent fails the same way', async () => {
    const agent = { name: 'c', engine: 'claude' as const, argv: [], env: {} };
    const out = await runAgent(agent, invocation(run, { baseEnv: { PATH: run.root } }));
    expect(out.failure).toBe(
      'agent binary not found: claude — fix: install the CLI on the worker (npm install -g @anthropic-ai/claude-code) or put claude on its PATH',
    );
  });

  it('a missing workspace fails without starting anything', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, { workspace: path.join(run.root, 'nope') }),
    );
    expect(out.ok).toBe(false);
    expect(out.failure).toMatch(/^workspace not found: /);
  });

  it('{prompt} in argv is refused as a failure', async () => {
    const agent = {
      name: 'leaky',
      engine: 'command' as const,
      argv: ['echo', '{prompt}'],
      env: {},
    };
    const out = await runAgent(agent, invocation(run));
    expect(out.ok).toBe(false);
    expect(out.failure).toContain('{prompt} is not allowed');
  });

  it('an abort before start reports cancelled without spawning', async () => {
    const ctl = new AbortController();
    ctl.abort();
    const pids: number[] = [];
    const out = await runAgent(
      demoAgent(),
      invocation(run, { signal: ctl.signal, onSpawn: (p) => pids.push(p) }),
    );
    expect(out).toMatchObject({ ok: false, cancelled: true });
    expect(pids).toEqual([]);
  });
});

describe('runAgent: directives', () => {
  it('reads the directive the agent wrote', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, {
        prompt: 'demo: sleep=0 directive=checkpoint reason="please review the diff"',
      }),
    );
    expect(out.ok).toBe(true);
    expect(out.directive).toEqual({ action: 'checkpoint', reason: 'please review the diff' });
  });

  it('reads a trigger directive with its agent id', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, { prompt: 'demo: sleep=0 directive=trigger agent=reviewer' }),
    );
    expect(out.directive).toEqual({ action: 'trigger', triggerAgentId: 'reviewer' });
  });

  it('resets a stale directive to continue before the agent starts', async () => {
    fs.mkdirSync(path.dirname(run.directiveFile), { recursive: true });
    fs.writeFileSync(run.directiveFile, '{"action":"stop"}');
    const out = await runAgent(demoAgent(), invocation(run, { prompt: 'demo: sleep=0' }));
    expect(out.directive).toEqual({ action: 'continue' });
    expect(JSON.parse(fs.readFileSync(run.directiveFile, 'utf8'))).toEqual({ action: 'continue' });
  });

  it('a directive file the agent deleted means continue', async () => {
    const agent = {
      name: 'rm',
      engine: 'command' as const,
      argv: [
        process.execPath,
        '-e',
        'require("fs").unlinkSync(process.env.PHASEBRIDGE_DIRECTIVE_FILE)',
      ],
      env: {},
    };
    const out = await runAgent(agent, invocation(run));
    expect(fs.existsSync(run.directiveFile)).toBe(false);
    expect(out).toMatchObject({ ok: true, directive: { action: 'continue' } });
  });

  it('invalid JSON in the directive fails the step with the reason', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, { prompt: 'demo: sleep=0 directive=invalid' }),
    );
    expect(out).toMatchObject({ ok: false, exitCode: 0, directive: null });
    expect(out.failure).toMatch(/^invalid directive: directive file is not valid JSON/);
  });

  it('a directive with an unknown action fails the step', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, { prompt: 'demo: sleep=0 directive=badshape' }),
    );
    expect(out.ok).toBe(false);
    expect(out.failure).toMatch(/^invalid directive: action:/);
  });
});

describe('runAgent: output cap', () => {
  it('cuts the logs at the cap with one marker, keeps draining, and still parses the last line', async () => {
    const out = await runAgent(
      demoAgent(),
      invocation(run, { prompt: 'demo: sleep=0 noise=300000', outputCapBytes: 10_000 }),
    );
    const log = fs.readFileSync(run.logFile, 'utf8');
    expect(out.ok).toBe(true);
    expect(out.outputTruncated).toBe(true);
    expect(log.split('[phasebridge: output truncated after 10000 bytes]')).toHaveLength(2);
    expect(Buffer.byteLength(log)).toBeLessThan(10_000 + 2_000);
    // The result event came after 300 kB of noise: telemetry does not depend on the log cap.
    expect(out.telemetry.tokensOut).toBe(120);
    expect(out.outputTail.at(-1)).toContain('"type":"result"');
  });
});

describe('runAgent: environment', () => {
  it('gives the agent the PHASEBRIDGE_* variables and none of the secrets', async () => {
    const dump = path.join(run.root, 'env.json');
    const agent = {
      ...scriptAgent('print-env.mjs', dump),
      env: { AGENT_FLAG: 'on', SLACK_BOT_TOKEN: 'from-agent' },
    };
    await runAgent(
      agent,
      invocation(run, {
        baseEnv: {
          PATH: process.env.PATH ?? '',
          TELEGRAM_BOT_TOKEN: 'tg-secret-123',
          REDIS_URL: 'redis://secret',
          CUSTOM_SECRET: 'custom-secret-456',
          PHASEBRIDGE_WEB_TOKEN: 'web-secret-789',
          KEEP_ME: 'yes',
        },
        secretEnvNames: ['CUSTOM_SECRET'],
      }),
    );
    const env = JSON.parse(fs.readFileSync(dump, 'utf8')) as Record<string, string>;
    expect(env).toMatchObject({
      PHASEBRIDGE_RUN_ID: '2026-11-29T143000Z-add-login',
      PHASEBRIDGE_STEP_ID: 'build',
      PHASEBRIDGE_DIRECTIVE_FILE: run.directiveFile,
      PHASEBRIDGE_SPEC_FILE: run.specFile,
      AGENT_FLAG: 'on',
      KEEP_ME: 'yes',
    });
    for (const name of [
      'TELEGRAM_BOT_TOKEN',
      'REDIS_URL',
      'CUSTOM_SECRET',
      'PHASEBRIDGE_WEB_TOKEN',
      'SLACK_BOT_TOKEN',
    ]) {
      expect(env).not.toHaveProperty(name);
    }
    const log = fs.readFileSync(run.logFile, 'utf8');
    expect(log).not.toMatch(/secret|KEEP_ME/);
  });
});

describe('runAgent: no shell', () => {
  const nasty = 'hi; touch pwned1 && $(touch pwned2) `touch pwned3` | tee pwned4 > pwned5 \'"';

  it('passes a prompt with shell metacharacters verbatim on stdin and argv args literally', async () => {
    const out = path.join(run.root, 'args.json');
    const agent = scriptAgent(
      'print-args.mjs',
      out,
      '$(touch pwned6)',
      '; touch pwned7',
      '{specFile}',
    );
    const res = await runAgent(agent, invocation(run, { prompt: nasty }));
    expect(res.ok).toBe(true);
    const seen = JSON.parse(fs.readFileSync(out, 'utf8'));
    expect(seen.stdin).toBe(nasty);
    expect(seen.args).toEqual(['$(touch pwned6)', '; touch pwned7', run.specFile]);
    expect(fs.realpathSync(seen.cwd)).toBe(fs.realpathSync(run.workspace));
    expect(fs.readdirSync(run.workspace).filter((f) => f.startsWith('pwned'))).toEqual([]);
    expect(fs.readFileSync(run.logFile, 'utf8')).not.toContain('touch pwned1');
  });

  it('promptVia file writes <logdir>/prompt-<step>-<attempt>.md, appends its path, sends no stdin', async () => {
    const out = path.join(run.root, 'args.json');
    const agent = { ...scriptAgent('print-args.mjs', out), promptVia: 'file' as const };
    await runAgent(agent, invocation(run, { prompt: nasty, attempt: 2 }));
    const seen = JSON.parse(fs.readFileSync(out, 'utf8'));
    const promptFile = path.join(path.dirname(run.logFile), 'prompt-build-2.md');
    expect(seen).toMatchObject({ args: [promptFile], stdin: '' });
    expect(fs.readFileSync(promptFile, 'utf8')).toBe(nasty);
  });
});

describe('runAgent: CPU priority', () => {
  const own = os.getPriority();
  const lowered = (by: number) => Math.min(19, own + by);
  // Linux with autogroups: the agent's session has its own group, lowered as well. Without
  // CAP_SYS_ADMIN the kernel takes one autogroup change per 100 ms, so only root asserts it.
  const groups = fs.existsSync('/proc/self/autogroup');
  const group = (nice: number) =>
    !groups ? 'none' : process.getuid?.() === 0 ? String(nice) : String.raw`-?\d+`;

  it('starts the agent, and what it starts, the given increment below our priority', async () => {
    const out = await runAgent(scriptAgent('print-nice.mjs'), invocation(run, { nice: 7 }));
    expect(out.ok).toBe(true);
    const log = fs.readFileSync(run.logFile, 'utf8');
    const n = lowered(7);
    expect(log).toMatch(new RegExp(`^nice=${n} child=${n} autogroup=${group(n)}$`, 'm'));
  });

  it('leaves the agent, and its own autogroup, at our priority with no increment', async () => {
    await runAgent(scriptAgent('print-nice.mjs'), invocation(run));
    const log = fs.readFileSync(run.logFile, 'utf8');
    expect(log).toMatch(new RegExp(`^nice=${own} child=${own} autogroup=${group(0)}$`, 'm'));
  });
});
