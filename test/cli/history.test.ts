/**
 * History through the real CLI: a command that opens the orchestrator next to a running
 * `serve` says nothing about the runs the bridge holds; `archive` packs finished runs' folders
 * into checked archives (and `status` says where a run went); `prune` reports what it removed.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { slow } from '../support/slowdown.ts';
import { MANY_STEPS_TIMEOUT_MS, runCli, runCliAsync } from './support.ts';

const BIN = path.resolve(import.meta.dirname, '../../bin/phasebridge.js');
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-cli-history-'));
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  fs.rmSync(root, { recursive: true, force: true });
});

/** Drops the bin's one-line "building dist/" notice: it is not the command's output. */
const clean = (err: string) => err.replace(/^phasebridge: building dist\/.*\n/gm, '');

/** Starts `serve` on `home` (port 0); resolves once it serves the control socket. */
async function startServe(home: string, ws: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PHASEBRIDGE_HOME: home,
      PHASEBRIDGE_WORKSPACE: ws,
      PHASEBRIDGE_PORT: '0',
      LOG_LEVEL: 'warn',
      DEMO_AGENT_BEHAVIOUR: 'sleep=20',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  cleanups.push(async () => {
    child.kill('SIGTERM');
    await exited;
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve not up:\n${out}`)), slow(60_000));
    const on = (c: Buffer) => {
      out += c.toString();
      if (out.includes('Ctrl+C stops')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
  });
  return child;
}

/** Runs `phasebridge worker` until it says it runs, then stops it; its stderr. */
async function workerStderr(home: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    cwd: root,
    env: { PATH: process.env.PATH, PHASEBRIDGE_HOME: home, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`worker not up:\n${out}${err}`)), slow(60_000));
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('running jobs from')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.kill('SIGTERM');
  await exited;
  return clean(err);
}

describe('CLI next to a live bridge', () => {
  it('a worker started beside serve warns about none of the runs the bridge holds', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const home = path.join(root, 'live-home');
    const ws = path.join(root, 'live-ws');
    fs.mkdirSync(path.join(ws, 'workflows'), { recursive: true });
    fs.writeFileSync(
      path.join(ws, 'workflows', 'slow.workflow.yaml'),
      'id: slow\nsteps:\n  - id: work\n    agent: demo\n    prompt: "demo: hang"\n',
    );
    // An awaiting and a cancelled run from before the bridge started.
    const waiting = runCli(['run', 'demo', '--workspace', ws, '--spec', 'waits'], home, root);
    expect(waiting.code).toBe(0);
    const waitingId = /phasebridge approve (\S+)/.exec(waiting.out)![1]!;
    const other = runCli(['run', 'demo', '--workspace', ws, '--spec', 'dropped'], home, root);
    const otherId = /phasebridge approve (\S+)/.exec(other.out)![1]!;
    expect(runCli(['cancel', otherId], home, root).code).toBe(0);

    await startServe(home, ws);
    // A run the bridge drives: its step runs (and the bridge holds its lock) until cancelled.
    const held = await runCliAsync(
      ['run', 'slow', '--workspace', ws, '--spec', 'held', '--detach'],
      home,
      root,
    );
    expect(held.code).toBe(0);
    const heldId = /run (\S+-held)/.exec(held.out)![1]!;
    for (;;) {
      const s = runCli(['status', heldId, '--json'], home, root);
      if (JSON.parse(s.out).steps[0].status === 'running') break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const err = await workerStderr(home);
    expect(err).not.toMatch(/not recovered|not found on disk|locked by pid/);
    expect(err).toBe('');

    // The bridge still drives both unfinished runs.
    const cancel = await runCliAsync(['cancel', heldId], home, root);
    expect(cancel.code).toBe(0);
    expect(clean(cancel.err)).toBe('');
    const approve = await runCliAsync(['approve', waitingId, '--detach'], home, root);
    expect(approve.code).toBe(0);
    expect(clean(approve.err)).toBe('');
  });
});

describe('archive and prune from the CLI', () => {
  it('archives a finished run into a checked tar.gz, keeps unfinished ones, and prune reports', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, () => {
    const home = path.join(root, 'arch-home');
    const ws = path.join(root, 'arch-ws');
    const cli = (...args: string[]) => {
      const r = runCli(args, home, root);
      return { ...r, err: clean(r.err) };
    };
    const done = cli('run', 'demo', '--workspace', ws, '--spec', 'finished');
    const doneId = /phasebridge approve (\S+)/.exec(done.out)![1]!;
    expect(cli('cancel', doneId).code).toBe(0);
    const open = cli('run', 'demo', '--workspace', ws, '--spec', 'still open');
    const openId = /phasebridge approve (\S+)/.exec(open.out)![1]!;
    const runs = path.join(ws, '.phasebridge', 'runs');
    // A link planted in the finished run's folder, to a file outside the workspace.
    const secret = path.join(root, 'secret.txt');
    fs.writeFileSync(secret, 'TOP SECRET CONTENT');
    fs.symlinkSync(secret, path.join(runs, doneId, 'planted'));
    const ledger = fs.readFileSync(path.join(runs, doneId, 'ledger.jsonl'), 'utf8');

    expect(cli('archive').code).not.toBe(0);
    expect(cli('archive', '--older-than', 'soon').err).toContain("--older-than 'soon'");

    const dry = cli('archive', '--older-than', '1ms', '--dry-run');
    expect(dry.out).toContain(`would archive run ${doneId} (cancelled `);
    expect(dry.out).not.toContain(openId);
    expect(fs.existsSync(path.join(runs, doneId))).toBe(true);

    const r = cli('archive', '--older-than', '1ms');
    expect(r.code).toBe(0);
    expect(r.out).toContain(`archived run ${doneId} (cancelled `);
    expect(r.out).toContain('archived 1 run(s)');
    const archive = path.join(runs, `${doneId}.tar.gz`);
    expect(fs.existsSync(path.join(runs, doneId))).toBe(false);
    expect(fs.existsSync(path.join(runs, openId))).toBe(true);
    expect(fs.existsSync(secret)).toBe(true);

    // Readable by the standard tools: checksum and contents.
    const sum = spawnSync('sha256sum', ['-c', `${doneId}.tar.gz.sha256`], {
      cwd: runs,
      encoding: 'utf8',
    });
    expect(sum.stdout).toContain(`${doneId}.tar.gz: OK`);
    const listing = spawnSync('tar', ['-tvzf', archive], { encoding: 'utf8' }).stdout;
    expect(listing).toContain(`${doneId}/ledger.jsonl`);
    expect(listing).toMatch(new RegExp(`${doneId}/planted -> ${secret.replace(/[.]/g, '\\.')}`));
    const out = path.join(root, 'unpacked');
    fs.mkdirSync(out);
    spawnSync('tar', ['-xzf', archive, '-C', out]);
    expect(fs.readFileSync(path.join(out, doneId, 'ledger.jsonl'), 'utf8')).toBe(ledger);
    // The link was stored as a link: the secret's content is nowhere in the archive.
    const raw = spawnSync('tar', ['-xOzf', archive], { encoding: 'utf8' }).stdout;
    expect(raw).not.toContain('TOP SECRET CONTENT');

    expect(cli('archive', '--verify').out).toContain('1 archive(s) verified');
    const status = cli('status', doneId);
    expect(status.code).not.toBe(0);
    expect(status.err).toContain(`run ${doneId} was archived on `);
    expect(status.err).toContain(archive);
    // The unfinished run works as before.
    expect(cli('status', openId).out).toMatch(/status +awaiting/);

    // A changed archive is caught.
    const bytes = fs.readFileSync(archive);
    bytes[bytes.length - 10] = (bytes[bytes.length - 10]! + 1) % 256;
    fs.writeFileSync(archive, bytes);
    const bad = cli('archive', '--verify');
    expect(bad.code).toBe(1);
    expect(bad.out).toContain(`BAD  run ${doneId}: checksum does not match`);

    // Nothing to prune yet in a fresh home; the report says what it looked at.
    const prune = cli('prune');
    expect(prune.code).toBe(0);
    expect(prune.out).toMatch(
      /^jobs: removed 0 finished job\(s\) of finished runs, finished before \S+ \(kept 30d\)$/m,
    );
    expect(prune.out).toMatch(/^audit: removed 0 row\(s\) from before \S+ \(kept 365d\)$/m);
    const json = JSON.parse(runCli(['prune', '--json', '--dry-run'], home, root).out) as Record<
      string,
      unknown
    >;
    expect(json).toMatchObject({ jobs: 0, audit: 0, dryRun: true });
  });

  it('a short retention prunes the finished run’s jobs and exports the audit', {
    timeout: MANY_STEPS_TIMEOUT_MS,
  }, async () => {
    const home = path.join(root, 'prune-home');
    const ws = path.join(root, 'prune-ws');
    const env = { PHASEBRIDGE_RETAIN_JOBS: '1ms', PHASEBRIDGE_RETAIN_AUDIT: '1ms' };
    const cli = (...args: string[]) => runCliAsync(args, home, root, env);
    // Two finished runs: the latest finished job is kept (the queue numbers on from it).
    for (const spec of ['first', 'second']) {
      const done = await cli('run', 'demo', '--workspace', ws, '--spec', spec);
      const doneId = /phasebridge approve (\S+)/.exec(done.out)![1]!;
      expect((await cli('cancel', doneId)).code).toBe(0);
    }
    expect((await cli('bind', 'telegram:100', '--workspace', ws)).code).toBe(0);
    const r = await cli('prune');
    expect(r.code).toBe(0);
    const removed = Number(/jobs: removed (\d+) finished job/.exec(r.out)![1]);
    expect(removed).toBeGreaterThanOrEqual(1);
    const exported = /audit rows exported first to (\S+)/.exec(r.out)?.[1];
    expect(exported).toBeDefined();
    const lines = fs
      .readFileSync(exported!, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.some((l) => l.action === 'bind' && l.actor.startsWith('cli:'))).toBe(true);
    expect(path.dirname(exported!)).toBe(path.join(home, 'audit'));
  });
});
