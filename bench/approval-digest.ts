/**
 * Benchmark: the re-check of a checkpoint's content digest on Approve (issue 36). A workspace of
 * 2,000 files, 10 MB in all (5 KB each), every one of them in the step's changed-files list, plus
 * the declared artifact plan.md, a 1 MB diff file and the step's log; the run state comes from
 * the real engine (decide/evolve), the digest from the real CheckpointDigests with its file cache.
 *   cold_ms:           the first digest (every file read and hashed: the checkpoint posting).
 *   recheck_ms:        a press with nothing changed (lstat of every file, no read): the cost
 *                      added to press → edit. Goal ≤ 20 ms p50.
 *   one_changed_ms:    a press after one file changed (that file read again).
 *   lstat_floor_ms:    2,001 bare lstat calls on the same files, measured alongside: the floor
 *                      any re-check that looks at every file pays (on a loaded machine most of it).
 *   few_listed:        the same workspace when the step changed one file per folder (40): the
 *                      names beside them count, so a file added there is noticed
 *                      (`new_file_noticed`); a re-check lstats 41 folders, not their files.
 * Run: npx tsx bench/approval-digest.ts [--rounds 20]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CheckpointDigests } from '../src/chatops/checkpoint-digest.ts';
import { stepLogPath } from '../src/jobs/orchestrator/run-files.ts';
import { changesFilePath, writeChangesFile } from '../src/jobs/runner/git-changes.ts';
import { diffFileOf } from '../src/jobs/runner/git-diff.ts';
import { Harness, RUN_ID, wf } from '../test/engine/harness.ts';

const arg = (name: string): string | undefined => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
const ROUNDS = Number(arg('rounds') ?? 20);
const FILES = 2000;
const FILE_BYTES = 5 * 1024;
const GOAL = { recheck_p50_ms: 20 };

function summary(values: number[]) {
  const s = [...values].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
  return { p50_ms: Number(at(0.5).toFixed(2)), p95_ms: Number(at(0.95).toFixed(2)) };
}

async function main(): Promise<void> {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-bench-digest-'));
  try {
    const h = new Harness();
    h.start(
      wf(`
id: planned
steps:
  - id: plan
    agent: planner
    prompt: plan it
    artifacts: [plan.md]
    checkpoint: { when: after }
`),
      { workspace: ws },
    );
    h.finish();
    const state = h.run;
    const cp = state.checkpoint!;
    const names: string[] = [];
    for (let i = 0; i < FILES; i++) {
      const rel = path.join(`dir-${i % 40}`, `file-${i}.ts`);
      fs.mkdirSync(path.join(ws, path.dirname(rel)), { recursive: true });
      fs.writeFileSync(path.join(ws, rel), Buffer.alloc(FILE_BYTES, i % 251));
      names.push(rel);
    }
    fs.writeFileSync(path.join(ws, 'plan.md'), '# Plan\n1. add login\n');
    const log = stepLogPath(ws, RUN_ID, 'plan', 1);
    fs.mkdirSync(path.dirname(log), { recursive: true });
    fs.writeFileSync(
      log,
      `${'agent output line\n'.repeat(2000)}{"type":"result","result":"done"}\n`,
    );
    fs.writeFileSync(diffFileOf(log), Buffer.alloc(1024 * 1024, 43));
    writeChangesFile(ws, changesFilePath(log, 'plan', 1), {
      base: 'a'.repeat(40),
      files: names.map((p) => ({ path: p, added: 100, removed: 0 })),
    });

    const digests = new CheckpointDigests();
    let t = performance.now();
    const first = await digests.compute(state, cp);
    const coldMs = performance.now() - t;
    const readsCold = digests.cache.reads;

    const recheck: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      const again = await digests.compute(state, cp);
      recheck.push(performance.now() - t);
      if (again.digest !== first.digest) throw new Error('the digest changed with nothing changed');
    }
    const readsWarm = digests.cache.reads - readsCold;

    const floor: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      for (const n of ['plan.md', ...names]) fs.lstatSync(path.join(ws, n));
      floor.push(performance.now() - t);
    }

    const oneChanged: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      fs.writeFileSync(path.join(ws, names[r % FILES]!), `changed ${r}\n`);
      t = performance.now();
      await digests.compute(state, cp);
      oneChanged.push(performance.now() - t);
    }
    // A step that changed one file per folder: the other 1,960 files sit beside listed ones; their
    // names count (a file added there is noticed), through the folders' lstat cache.
    writeChangesFile(ws, changesFilePath(log, 'plan', 1), {
      base: 'a'.repeat(40),
      files: names.slice(0, 40).map((p) => ({ path: p, added: 1, removed: 0 })),
    });
    const few = new CheckpointDigests();
    const fewFirst = await few.compute(state, cp);
    const fewRecheck: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      t = performance.now();
      const again = await few.compute(state, cp);
      fewRecheck.push(performance.now() - t);
      if (again.digest !== fewFirst.digest)
        throw new Error('the digest changed with nothing changed');
    }
    fs.writeFileSync(path.join(ws, 'dir-7', 'new-file.ts'), 'added after posting\n');
    const noticed = (await few.compute(state, cp)).digest !== fewFirst.digest;
    const re = summary(recheck);
    console.log(
      JSON.stringify(
        {
          workspace: { files: FILES + 1, bytes: FILES * FILE_BYTES, diff_bytes: 1024 * 1024 },
          rounds: ROUNDS,
          cold_ms: Number(coldMs.toFixed(2)),
          files_read_cold: readsCold,
          recheck_ms: re,
          files_read_per_recheck: readsWarm / ROUNDS,
          one_changed_ms: summary(oneChanged),
          lstat_floor_ms: summary(floor),
          few_listed: {
            listed: 40,
            beside: fewFirst.parts.size - 43,
            recheck_ms: summary(fewRecheck),
            new_file_noticed: noticed,
          },
          goals: GOAL,
          met: re.p50_ms <= GOAL.recheck_p50_ms,
          machine: { cpus: os.cpus().length, load_avg_1m: Number(os.loadavg()[0]!.toFixed(2)) },
        },
        null,
        2,
      ),
    );
  } finally {
    fs.rmSync(ws, { recursive: true, force: true });
  }
}

await main();
