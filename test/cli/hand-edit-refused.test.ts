/**
 * A hand edit of template.json applied by a command that is then refused (issue 18 item 11's
 * "the run is left queued"): the CLI drives the moved run on and still reports the refusal.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { MANY_STEPS_TIMEOUT_MS, runCli } from './support.ts';

const root = mkdtempSync(join(tmpdir(), 'pb-cli-edit-refused-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

it('drives a run a hand edit moved even when the command itself is refused', {
  timeout: MANY_STEPS_TIMEOUT_MS,
}, () => {
  const home = join(root, 'home');
  const ws = join(root, 'ws');
  const cli = (...args: string[]) => runCli(args, home, root);
  const start = cli('run', 'demo', '--workspace', ws, '--spec', 'x', '--layout', 'codemachine');
  const runId = /phasebridge approve (\S+)/.exec(start.out)![1]!;
  expect(cli('approve', runId).out).toContain('awaiting approval of review');

  // Re-run the review (step 2) by hand, then answer a checkpoint that the edit closes.
  const file = join(ws, '.codemachine', 'template.json');
  const doc = JSON.parse(readFileSync(file, 'utf8'));
  delete doc.completedSteps['2'];
  writeFileSync(file, JSON.stringify(doc, null, 2));
  const refused = cli('approve', runId, '--checkpoint', 'review:1');
  expect(refused.code).toBe(1);
  expect(refused.err).toMatch(/^phasebridge: .*review:1/m);
  // Not left queued: the review ran again and its new checkpoint waits.
  expect(refused.out).toContain('review: completed');
  expect(refused.out).toContain('awaiting approval of review');
  const status = cli('status', runId);
  expect(status.out).toMatch(/review:2/);
});
