import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

/** The demo workflow through the real CLI in one layout (a file per layout: they run in parallel). */
export function describeDemoRun(layout: 'native' | 'codemachine'): void {
  const root = mkdtempSync(join(tmpdir(), `pb-cli-run-${layout}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  const cli = (...args: string[]) => runCli(args, home, root);

  describe(`the demo workflow from the CLI, ${layout} layout`, () => {
    it('runs to completion with both checkpoints approved from the CLI', {
      timeout: MANY_STEPS_TIMEOUT_MS,
    }, () => {
      const start = cli(
        'run',
        'demo',
        '--workspace',
        ws,
        '--spec',
        'add login',
        '--layout',
        layout,
      );
      expect(start.err).toBe('');
      expect(start.code).toBe(0);
      const runId = /phasebridge approve (\S+)/.exec(start.out)?.[1];
      expect(runId).toMatch(/^\d{4}-\d\d-\d\dT\d{6}Z-add-login$/);
      // Plain progress lines (stdout is not a terminal), then where the run stands.
      expect(start.out).toContain(
        `run ${runId} started: workflow demo (3 steps), layout ${layout}`,
      );
      expect(start.out).toContain('plan: running (attempt 1)');
      expect(start.out).toContain(
        'awaiting approval of plan: step plan finished: approve to continue',
      );

      const table = cli('status');
      expect(table.code).toBe(0);
      expect(table.out).toMatch(new RegExp(`${runId}\\s+demo\\s+awaiting\\s+${layout}`));

      const planLog = cli('logs', runId!, 'plan');
      expect(planLog.code).toBe(0);
      expect(planLog.out).toContain('demo-agent: prompt');
      expect(planLog.out).toContain('demo-agent: spec: add login');

      const first = cli(
        'approve',
        runId!,
        '--reason',
        'plan looks good',
        '--comment',
        'keep the diff small',
      );
      expect(first.code).toBe(0);
      // The approval's comment reaches the next step's agent (issue 29).
      expect(cli('logs', runId!, 'build').out).toMatch(
        /demo-agent: feedback from .+ \(approval, .+\): plan looks good\n.*keep the diff small/,
      );
      expect(first.out).toContain(`checkpoint plan:1: approve by ${userInfo().username}`);
      expect(first.out).toContain('build: running (attempt 1)');
      expect(first.out).toContain('awaiting approval of review');

      const second = cli('approve', runId!);
      expect(second.code).toBe(0);
      expect(second.out).toMatch(
        new RegExp(`run ${runId} completed: all steps completed \\(.+ tokens, \\$[0-9.]+\\)`),
      );

      const status = cli('status', runId!);
      expect(status.code).toBe(0);
      expect(status.out).toContain('  status    completed');
      for (const step of ['plan', 'build', 'review']) {
        expect(status.out).toMatch(new RegExp(`${step}\\s+demo\\s+completed\\s+1\\s+\\d{4}-`));
      }
      expect(status.out).toMatch(/total: .+ tokens in, .+ out, \$0\.\d{4}/);

      const again = cli('approve', runId!);
      expect(again.code).toBe(1);
      expect(again.err.trim()).toBe(
        `phasebridge: run ${runId} is completed; nothing can change it`,
      );

      checkFiles(ws, runId!, layout);
    });
  });
}

function checkFiles(ws: string, runId: string, layout: 'native' | 'codemachine'): void {
  const runDir = join(ws, '.phasebridge', 'runs', runId);
  const ledger = readFileSync(join(runDir, 'ledger.jsonl'), 'utf8').trim().split('\n');
  expect(ledger.length).toBeGreaterThan(10);
  for (const line of ledger) expect(() => JSON.parse(line)).not.toThrow();
  // run.json is the run's summary; the checkpoints' decisions are in the ledger.
  const run = JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8'));
  expect(run.status).toBe('completed');
  expect(run.layout).toBe(layout);
  expect(run.closedCheckpoints).toBe(2);
  const decisions = ledger
    .flatMap((line) => JSON.parse(line).events as { type: string; decision?: { answer: string } }[])
    .filter((e) => e.type === 'checkpointResolved')
    .map((e) => e.decision?.answer);
  expect(decisions).toEqual(['approve', 'approve']);
  const cm = join(ws, '.codemachine');
  if (layout === 'native') {
    expect(existsSync(cm)).toBe(false);
    return;
  }
  const template = JSON.parse(readFileSync(join(cm, 'template.json'), 'utf8'));
  expect(Object.keys(template.completedSteps).sort()).toEqual(['0', '1', '2']);
  expect(template.notCompletedSteps).toEqual([]);
  const db = new Database(join(cm, 'logs', 'registry.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT a.name, a.status, t.tokens_in > 0 AS counted, t.cost > 0 AS paid
         FROM agents a JOIN telemetry t ON t.agent_id = a.id ORDER BY a.id`,
      )
      .all();
    const row = { name: 'demo', status: 'completed', counted: 1, paid: 1 };
    expect(rows).toEqual([row, row, row]);
  } finally {
    db.close();
  }
}
