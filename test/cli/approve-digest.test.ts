/**
 * `phasebridge approve --digest` (issue 36): a digest that is not the checkpoint's content now is
 * refused and changes nothing; the digest named in the refusal approves; the decision carries it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-digest-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const PLANNED = `id: planned
steps:
  - id: plan
    agent: demo
    prompt: plan it
    artifacts: [plan.md]
    checkpoint:
      when: after
`;

it('refuses an approval of other content and approves the digest it names', {
  timeout: MANY_STEPS_TIMEOUT_MS,
}, () => {
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  mkdirSync(join(ws, 'workflows'), { recursive: true });
  writeFileSync(join(ws, 'workflows', 'planned.workflow.yaml'), PLANNED);
  writeFileSync(join(ws, 'plan.md'), '# Plan\n1. add login\n');
  const cli = (...args: string[]) => runCli(args, home, root);
  const start = cli('run', 'planned', '--workspace', ws, '--spec', 'x');
  const runId = /phasebridge approve (\S+)/.exec(start.out)![1]!;

  const malformed = cli('approve', runId, '--digest', 'not-hex');
  expect(malformed.code).toBe(2);
  expect(malformed.err).toContain('--digest takes the checkpoint');

  const wrong = cli('approve', runId, '--digest', '000000');
  expect(wrong.code).toBe(1);
  const now = /is now plan\.md, ([0-9a-f]{6}) \(sha256 ([0-9a-f]{64})\)/.exec(wrong.err);
  expect(now, wrong.err).not.toBeNull();
  expect(cli('status', runId).out).toMatch(/awaiting/);

  // The plan changes after it was looked at: the digest seen no longer approves.
  writeFileSync(join(ws, 'plan.md'), '# Plan\n1. skip the tests\n');
  const stale = cli('approve', runId, '--digest', now![1]!);
  expect(stale.code).toBe(1);
  expect(stale.err).toMatch(/is now plan\.md, [0-9a-f]{6} \(sha256 [0-9a-f]{64}\), not the/);
  const fresh = /is now plan\.md, ([0-9a-f]{6}) \(sha256 ([0-9a-f]{64})\)/.exec(stale.err)!;
  expect(fresh[2]).not.toBe(now![2]);

  const ok = cli('approve', runId, '--digest', fresh[1]!);
  expect(ok.code, ok.err).toBe(0);
  // The ledger's decision event carries the digest approved.
  const ledger = readFileSync(join(ws, '.phasebridge', 'runs', runId, 'ledger.jsonl'), 'utf8');
  const decisions = ledger
    .split('\n')
    .filter((l) => l.includes('"checkpointResolved"'))
    .flatMap((l) => (JSON.parse(l) as { events: { type: string; decision?: unknown }[] }).events)
    .filter((e) => e.type === 'checkpointResolved');
  expect(decisions).toHaveLength(1);
  expect(decisions[0]!.decision).toMatchObject({ answer: 'approve', digest: fresh[2] });
});

const HAS_SCRIPT = spawnSync('script', ['--version']).status === 0;

it.skipIf(!HAS_SCRIPT)(
  'on a terminal, approve without --digest prints what it approves',
  {
    timeout: MANY_STEPS_TIMEOUT_MS,
  },
  () => {
    const home = join(root, 'home-tty');
    const ws = join(root, 'ws-tty');
    mkdirSync(join(ws, 'workflows'), { recursive: true });
    writeFileSync(join(ws, 'workflows', 'planned.workflow.yaml'), PLANNED);
    writeFileSync(join(ws, 'plan.md'), '# Plan\n1. add login\n');
    const start = runCli(['run', 'planned', '--workspace', ws, '--spec', 'x'], home, root);
    const runId = /phasebridge approve (\S+)/.exec(start.out)![1]!;
    // util-linux script(1) gives the CLI a pseudo-terminal as stdout.
    const bin = resolve(import.meta.dirname, '../../bin/phasebridge.js');
    const tty = spawnSync(
      'script',
      ['-qec', `"${process.execPath}" "${bin}" approve ${runId}`, '/dev/null'],
      {
        cwd: root,
        env: { PATH: process.env.PATH, PHASEBRIDGE_HOME: home, LOG_LEVEL: 'silent' },
        encoding: 'utf8',
      },
    );
    expect(tty.status, tty.stdout).toBe(0);
    expect(tty.stdout).toMatch(
      new RegExp(
        `approving checkpoint plan:1 of run ${runId}: plan\\.md, [0-9a-f]{6} \\(sha256 [0-9a-f]{64}\\)`,
      ),
    );
  },
);

it.each(['codemachine', 'flow'])(
  'in the %s layout the decision beside the run carries the digest',
  {
    timeout: MANY_STEPS_TIMEOUT_MS,
  },
  (layout) => {
    const home = join(root, `home-${layout}`);
    const ws = join(root, `ws-${layout}`);
    mkdirSync(join(ws, 'workflows'), { recursive: true });
    writeFileSync(join(ws, 'workflows', 'planned.workflow.yaml'), PLANNED);
    writeFileSync(join(ws, 'plan.md'), '# Plan\n1. add login\n');
    const cli = (...args: string[]) => runCli(args, home, root);
    const start = cli('run', 'planned', '--workspace', ws, '--spec', 'x', '--layout', layout);
    const runId = /phasebridge approve (\S+)/.exec(start.out)![1]!;
    const wrong = cli('approve', runId, '--digest', 'ffffff');
    const full = /\(sha256 ([0-9a-f]{64})\)/.exec(wrong.err)![1]!;
    expect(cli('approve', runId, '--digest', full).code).toBe(0);
    const ledger = readFileSync(join(ws, '.phasebridge', 'runs', runId, 'ledger.jsonl'), 'utf8');
    expect(ledger).toContain(`"digest":"${full}"`);
    if (layout === 'flow') {
      const activities = join(ws, '.flow', 'runs', runId, 'activities');
      const texts = readdirSync(activities).map((f) => readFileSync(join(activities, f), 'utf8'));
      expect(texts.some((t) => t.includes(`content sha256 ${full.slice(0, 12)}`))).toBe(true);
    }
  },
);
