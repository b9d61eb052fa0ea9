/**
 * The flow layout on disk (.flow/runs/<id>/): golden files for a completed, a blocked and a
 * rejected run; every file valid against the published JSON Schemas; YAML read back identically
 * by PyYAML (YAML 1.1); activities numbered and immutable; events.jsonl readers skip a torn
 * trailing line; a projection rebuilt from the ledger writes nothing twice.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parse, stringify } from 'yaml';
import { readEventsJsonl } from '../../../../src/engine/layouts/flow/events-file.ts';
import { flowLayout } from '../../../../src/engine/layouts/flow/index.ts';
import { RunStore } from '../../../../src/engine/store/run-store.ts';
import { ConflictError } from '../../../../src/errors.ts';
import {
  flowDir,
  flowFiles,
  flowWorkspace,
  pyyamlPresent,
  pyyamlReadAll,
  RUN_ID,
  schemaProblems,
} from './support.ts';

const GOLDEN = path.join(import.meta.dirname, 'golden');
const PYYAML = pyyamlPresent();
if (!PYYAML)
  process.stderr.write(
    '\n#### flow YAML 1.1 round trip SKIPPED: python3 with PyYAML not found (install: apt-get install python3-yaml, or pip install pyyaml) ####\n',
  );

let dispose: (() => Promise<void>) | undefined;
afterEach(async () => {
  await dispose?.();
  dispose = undefined;
});

function open() {
  const h = flowWorkspace();
  dispose = h.dispose;
  return h;
}

/** Compares every file with the golden text, validates it, and round-trips its YAML. */
function check(name: string, ws: string): void {
  const files = flowFiles(ws);
  const text = files.map(([f, t]) => `==> ${f} <==\n${t}`).join('\n');
  const file = path.join(GOLDEN, `${name}.golden.txt`);
  if (process.env.UPDATE_GOLDEN === '1') fs.writeFileSync(file, text);
  expect(text).toBe(fs.readFileSync(file, 'utf8'));
  expect(schemaProblems(ws)).toEqual([]);
  if (PYYAML) {
    const yamls = files.filter(([f]) => f.endsWith('.yaml'));
    const read = pyyamlReadAll(yamls.map(([, t]) => t));
    for (const [i, [f, t]] of yamls.entries()) expect(read?.[i], f).toEqual(parse(t));
  }
}

/** Runs flow-start-issue to its end: every phase passes, both checkpoints approved. */
async function complete(d: ReturnType<typeof open>['d']) {
  await d.start();
  await d.finish(); // preflight
  await d.finish(); // explore
  await d.finish(); // plan → checkpoint
  await d.approve();
  await d.finish(); // code
  await d.finish(); // verify → pr's before gate
  await d.approve();
  return d.finish(); // pr
}

describe('flow layout', () => {
  it('01 a completed run: activities at every boundary, status completed', async () => {
    const { d, ws } = open();
    const end = await complete(d);
    expect(end.status).toBe('completed');
    const run = parse(fs.readFileSync(path.join(flowDir(ws), 'run.yaml'), 'utf8'));
    expect(run.state.status).toBe('completed');
    expect(run.state.completed_activities.length).toBeGreaterThan(0);
    expect(run.context).toEqual({ repo: 'acme/shop', branch: 'issue-42', issue: 42 });
    const names = fs
      .readdirSync(path.join(flowDir(ws), 'activities'))
      .filter((f) => f.endsWith('.yaml'))
      .sort();
    expect(names.map((n) => n.slice(0, 3))).toEqual(
      names.map((_, i) => String(i + 1).padStart(3, '0')),
    );
    const events = readEventsJsonl(fs.readFileSync(path.join(flowDir(ws), 'events.jsonl'), 'utf8'));
    expect(events[0]).toMatchObject({ type: 'run_started' });
    expect(events.filter((e) => e.type === 'activity_recorded').map((e) => e.path)).toEqual(
      names.map((n) => `activities/${n}`),
    );
    expect(events.at(-1)).toMatchObject({ type: 'run_completed' });
    check('01-completed', ws);
  });

  it('02 a failed step: blocked with blocked_reason', async () => {
    const { d, ws } = open();
    await d.start();
    const step = d.run.steps[0]!;
    await d.ok({ type: 'stepStarted', stepId: step.id, attempt: 1 });
    await d.ok({ type: 'stepFailed', stepId: step.id, attempt: 1, error: 'the worktree is dirty' });
    const run = parse(fs.readFileSync(path.join(flowDir(ws), 'run.yaml'), 'utf8'));
    expect(run.state).toMatchObject({
      status: 'blocked',
      blocked_reason: 'step preflight failed: the worktree is dirty',
    });
    check('02-blocked', ws);
  });

  it('03 a rejected plan fails the run: blocked (the schema has no failed) with the reason', async () => {
    const { d, ws } = open();
    await d.start();
    await d.finish();
    await d.finish();
    await d.finish();
    await d.ok({ type: 'answerCheckpoint', answer: 'reject', reason: 'too risky' });
    expect(d.run.status).toBe('failed');
    const run = parse(fs.readFileSync(path.join(flowDir(ws), 'run.yaml'), 'utf8'));
    expect(run.state.status).toBe('blocked');
    expect(run.state.blocked_reason).toContain('too risky');
    check('03-rejected', ws);
  });

  it('activities are immutable, a torn events.jsonl line is skipped, a rebuild writes nothing twice', async () => {
    const { d, ws } = open();
    await d.start();
    await d.finish();
    const first = path.join(
      flowDir(ws),
      'activities',
      fs.readdirSync(path.join(flowDir(ws), 'activities')).find((f) => f.startsWith('001-'))!,
    );
    const firstText = fs.readFileSync(first, 'utf8');
    // A writer died mid-line.
    fs.appendFileSync(path.join(flowDir(ws), 'events.jsonl'), '{"type": "activity_rec');
    await d.finish();
    await d.finish();
    await d.approve();
    expect(fs.readFileSync(first, 'utf8')).toBe(firstText);
    const text = fs.readFileSync(path.join(flowDir(ws), 'events.jsonl'), 'utf8');
    const lines = readEventsJsonl(text);
    expect(lines.filter((l) => l.type === 'activity_recorded')).toHaveLength(4);
    expect(text.split('\n').filter((l) => l.startsWith('{"type": "activity_rec'))).toHaveLength(1);
    // Lose the native projection: the next load rebuilds every layout from the ledger.
    const before = flowFiles(ws);
    await d.store.close();
    fs.rmSync(path.join(ws, '.phasebridge', 'runs', RUN_ID, 'run.json'));
    d.store = new RunStore({ workspace: ws, layouts: [flowLayout] });
    const loaded = await d.store.load(RUN_ID);
    expect(loaded.state.seq).toBe(d.run.seq);
    expect(flowFiles(ws)).toEqual(before);
  });
  it("keeps what flow's own tools write between two commits: run.yaml keys, events.jsonl lines", async () => {
    const { d, ws } = open();
    await d.start();
    await d.finish(); // preflight
    const runYaml = path.join(flowDir(ws), 'run.yaml');
    const events = path.join(flowDir(ws), 'events.jsonl');
    // flow's helpers: run.yaml merged and replaced by a rename, a line appended to events.jsonl.
    const doc = parse(fs.readFileSync(runYaml, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(`${runYaml}.tmp`, stringify({ ...doc, limits: { max_iterations: 3 } }));
    fs.renameSync(`${runYaml}.tmp`, runYaml);
    fs.appendFileSync(events, '{"type": "note", "at": "2026-05-20T14:30:05Z"}\n');
    await d.finish(); // explore: a new activity, so both files change
    // A hand edit in place (same file, new content) is seen too.
    const edited = parse(fs.readFileSync(runYaml, 'utf8')) as Record<string, unknown>;
    expect(edited.limits).toEqual({ max_iterations: 3 });
    fs.writeFileSync(runYaml, stringify({ ...edited, owner: 'alice' }));
    await d.finish(); // plan
    const final = parse(fs.readFileSync(runYaml, 'utf8')) as Record<string, unknown>;
    expect(final.limits).toEqual({ max_iterations: 3 });
    expect(final.owner).toBe('alice');
    expect((final.state as { completed_activities: string[] }).completed_activities).toHaveLength(
      3,
    );
    const lines = readEventsJsonl(fs.readFileSync(events, 'utf8'));
    const note = lines.findIndex((l) => l.type === 'note');
    expect(note).toBeGreaterThan(0);
    expect(lines.slice(note + 1).filter((l) => l.type === 'activity_recorded')).toHaveLength(2);
    expect(lines.filter((l) => l.type === 'activity_recorded')).toHaveLength(3);
  });
  it("takes no lock file in the run's flow folder: the run's own lock keeps other writers out", async () => {
    const { d, ws } = open();
    // Lock files are taken by a hard link (run-lock.ts): every link made during a whole run.
    const linked: string[] = [];
    const link = fs.linkSync;
    const spy = vi.spyOn(fs, 'linkSync').mockImplementation((from, to) => {
      linked.push(path.resolve(String(to)));
      link(from, to);
    });
    try {
      await complete(d);
    } finally {
      spy.mockRestore();
    }
    // Only the run's lock, taken once when the run is created (issue 31: a lock file per
    // run.yaml rewrite and per activity cost a create, a link and two unlinks each).
    expect(linked).toEqual([path.join(ws, '.phasebridge', 'runs', RUN_ID, 'lock')]);
    expect(fs.readdirSync(flowDir(ws)).filter((f) => f.includes('lock'))).toEqual([]);
    // Another store (another process) cannot write the run while it is open here.
    const other = new RunStore({ workspace: ws, layouts: [flowLayout] });
    try {
      await expect(other.load(RUN_ID)).rejects.toBeInstanceOf(ConflictError);
    } finally {
      await other.close();
    }
  });
});
