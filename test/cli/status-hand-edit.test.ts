/**
 * Issue 18 item 11: with no bridge running, `status RUN` shows a pending hand edit of
 * template.json instead of the old state alone, and changes nothing (the next command applies it).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-status-edit-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('status reads a hand edit of template.json without applying it', {
  timeout: MANY_STEPS_TIMEOUT_MS,
}, () => {
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  const cli = (...args: string[]) => runCli(args, home, root);
  const start = cli(
    'run',
    'demo',
    '--workspace',
    ws,
    '--spec',
    'add login',
    '--layout',
    'codemachine',
  );
  expect(start.code).toBe(0);
  const runId = /phasebridge approve (\S+)/.exec(start.out)?.[1];
  expect(runId).toBeDefined();

  const file = join(ws, '.codemachine', 'template.json');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  // Step 0 is the only completed step, so this clears completedSteps: CodeMachine's reset.
  delete doc.completedSteps['0'];
  const edited = `${JSON.stringify(doc, null, 2)}\n`;
  writeFileSync(file, edited);
  const ledger = join(ws, '.phasebridge', 'runs', runId!, 'ledger.jsonl');
  const before = readFileSync(ledger, 'utf8');

  const status = cli('status', runId!);
  expect(status.code).toBe(0);
  expect(status.out).toContain('  status    awaiting');
  expect(status.out).toContain(
    'template.json was edited: the run starts over from step 0 at the next command to the run',
  );
  // Read-only: neither the file nor the ledger changed.
  expect(readFileSync(file, 'utf8')).toBe(edited);
  expect(readFileSync(ledger, 'utf8')).toBe(before);
  expect(readdirSync(join(ws, '.phasebridge', 'runs'))).toEqual([runId]);
});
