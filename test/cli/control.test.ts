import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-control-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const ws = join(root, 'ws');
const cli = (...args: string[]) => runCli(args, home, root);

/** setup → fetch (its agent always exits 3) → report (checkpoint after; may loop back to setup once). */
const FLAKY = `id: flaky
steps:
  - id: setup
    agent: demo
    prompt: Prepare the workspace.
  - id: fetch
    agent: demo
    prompt: |
      Fetch the data.
      demo: exit=3
  - id: report
    agent: demo
    prompt: Write the report.
    loop:
      backTo: setup
      max: 1
    checkpoint:
      when: after
`;

describe('moving a run by hand: retry, skip, changes, revert, cancel', () => {
  it('says why a run is blocked and what to type, and each command moves it on', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    mkdirSync(join(ws, 'workflows'), { recursive: true });
    writeFileSync(join(ws, 'workflows', 'flaky.workflow.yaml'), FLAKY);

    const run = cli('run', 'flaky', '--workspace', ws, '--spec', 'fetch and report');
    expect(run.code).toBe(1);
    const runId = /phasebridge retry (\S+)/.exec(run.out)?.[1];
    expect(runId).toMatch(/-fetch-and-report$/);
    expect(run.out).toContain('setup: completed');
    expect(run.out).toMatch(/fetch: failed \(attempt 1\): .*3/);
    expect(run.out).toContain(`run ${runId} is blocked at fetch: `);
    expect(run.out).toContain(`  phasebridge skip ${runId}`);

    const retry = cli('retry', runId!);
    expect(retry.code).toBe(1);
    expect(retry.out).toMatch(/fetch: failed \(attempt 2\)/);

    const skip = cli('skip', runId!, '--reason', 'data is cached');
    expect(skip.code).toBe(0);
    expect(skip.out).toContain('fetch: skipped (data is cached)');
    expect(skip.out).toContain('report: completed');
    expect(skip.out).toContain('awaiting approval of report');
    expect(skip.out).toContain(`  phasebridge changes ${runId} --reason TEXT`);

    const bare = cli('changes', runId!);
    expect(bare.code).not.toBe(0);
    expect(bare.err).toContain("required option '--reason <text>' not specified");

    // `loop` is the old name of `changes`.
    const loop = cli('loop', runId!, '--reason', 'redo it');
    expect(loop.code).toBe(1);
    // The CLI's person is the OS user, named without the `cli:` id prefix (issue 29).
    const me = userInfo().username;
    expect(loop.out).toContain(`setup: changes requested by ${me} for attempt 2: redo it`);
    expect(loop.out).toContain('report: looping back to setup (loop 1): redo it');
    expect(loop.out).toMatch(/setup: running \(attempt 2\)/);
    expect(loop.out).toMatch(/fetch: failed \(attempt 3\)/);

    // The prompt is on record (issue 29): the step's prompt and the reason, 0600 beside the log.
    const prompt = cli('logs', runId!, 'setup', '--prompt', '--attempt', '2');
    expect(prompt.code).toBe(0);
    expect(prompt.out).toMatch(
      /^Prepare the workspace\.[\s\S]*## Feedback from reviewers\n\n- \S+ \(requested changes, .+\): redo it\n$/,
    );
    expect(cli('logs', runId!, 'setup', '--prompt', '--attempt', '1').out).not.toContain('redo');
    const file = join(ws, '.phasebridge', 'runs', runId!, 'logs', 'prompt-setup-2.md');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const every = cli('logs', runId!, '--prompt');
    expect(every.out).toContain('==> setup (attempt 2) prompt <==');
    expect(every.out).toContain('==> fetch (attempt 3) prompt <==');
    expect(cli('logs', runId!, '--prompt', '--follow').err).toContain(
      '--prompt and --follow do not go together',
    );

    const revert = cli('revert', runId!, 'setup');
    expect(revert.code).toBe(1);
    expect(revert.out).toContain(`reverted to setup by ${me}`);
    expect(revert.out).toMatch(/setup: running \(attempt 3\)/);
    expect(revert.out).toMatch(/fetch: failed \(attempt 4\)/);

    const log = cli('logs', runId!, 'fetch', '--attempt', '1');
    expect(log.code).toBe(0);
    expect(log.out).toContain('demo-agent: failing with exit code 3');

    const all = cli('logs', runId!);
    expect(all.out).toContain('==> setup (attempt 3) <==');
    expect(all.out).toContain('==> fetch (attempt 4) <==');

    const cancel = cli('cancel', runId!, '--reason', 'enough');
    expect(cancel.code).toBe(0);
    expect(cancel.out).toContain(`run ${runId} cancelled: cancelled by ${me}: enough`);

    const status = cli('status', runId!);
    expect(status.out).toContain(`status    cancelled: cancelled by ${me}: enough`);
    // Every reviewer's reason, with its author, for the attempt it went to.
    expect(status.out).toMatch(
      /feedback from reviewers \(oldest first\)\n {2}setup attempt 2: changes requested by (?!cli:)\S+, .+ at report:1: redo it/,
    );
    expect(status.out).toMatch(/fetch\s+demo\s+failed\s+4/);

    // The audit export carries every word with its author and where it went (issue 29).
    const words = JSON.parse(cli('audit', runId!, '--json').out);
    expect(words.words).toEqual([
      expect.objectContaining({
        kind: 'changes',
        text: 'redo it',
        by: { id: `cli:${me}` },
        checkpointId: 'report:1',
        to: { stepId: 'setup', attempt: 2 },
        delivered: true,
      }),
      expect.objectContaining({ kind: 'outcome', text: `cancelled by ${me}: enough` }),
    ]);
    const audit = cli('audit', runId!);
    expect(audit.out).toContain(
      `${me}: changes requested at report:1 → given to setup, attempt 2: redo it`,
    );
  });
});
