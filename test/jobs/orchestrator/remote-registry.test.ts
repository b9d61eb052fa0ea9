/**
 * The bridge's writer of shipped logs for a codemachine job it registered (git mode): the
 * chunks go to the step log and to the row's `agent-*.log` alike, once each, never through a
 * planted link; the start report's pid lands in the row.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RegistryDb } from '../../../src/engine/layouts/codemachine/registry-db.ts';
import { stepJobId } from '../../../src/engine/model.ts';
import { RemoteLogs } from '../../../src/jobs/orchestrator/remote-log.ts';
import { remoteAgentLog } from '../../../src/jobs/orchestrator/remote-registry.ts';
import { stepLogPath } from '../../../src/jobs/orchestrator/run-files.ts';
import { createLogger } from '../../../src/log.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'pb-rreg-'));
  dirs.push(d);
  return d;
}
const b64 = (s: string) => Buffer.from(s).toString('base64');
const RUN = '2026-12-01T000000Z-x';

/** A workspace whose registry.db has the row the bridge registered for step `plan`, attempt 1. */
function registered(): { ws: string; id: number } {
  const ws = tmp();
  const db = RegistryDb.open(ws);
  try {
    const id = db.insert({
      jobId: stepJobId(RUN, 'plan', 1),
      runId: RUN,
      stepId: 'plan',
      kind: 'step',
      attempt: 1,
      name: 'planner',
      engine: 'claude',
      start: '2026-12-01T00:00:00.000Z',
      prompt: 'p',
      status: 'running',
    });
    return { ws, id };
  } finally {
    db.close();
  }
}

function writer(ws: string) {
  return new RemoteLogs({
    workspaceOf: async () => ws,
    log: createLogger({ level: 'silent' }),
  });
}

describe("the bridge's agent logs for remote codemachine steps", () => {
  it('writes each chunk to the step log and the agent log once; records the pid', async () => {
    const { ws, id } = registered();
    const logs = writer(ws);
    const job = {
      runId: RUN,
      stepId: 'plan',
      attempt: 1,
      payload: { layout: 'codemachine', monitoringId: id },
    };
    logs.started(job, 4242);
    logs.write(job, { offset: 0, data: b64('[phasebridge] prompt:\nhi\n') });
    logs.write(job, { offset: 0, data: b64('[phasebridge] prompt:\nhi\n') }); // heard twice
    logs.write(job, { offset: 25, data: b64('output\n') });
    await logs.settled(RUN);
    const agentLog = remoteAgentLog(ws, job)!;
    expect(path.basename(agentLog)).toMatch(new RegExp(`^agent-${id}-planner-`));
    const want = '[phasebridge] prompt:\nhi\noutput\n';
    expect(fs.readFileSync(agentLog, 'utf8')).toBe(want);
    expect(fs.readFileSync(stepLogPath(ws, RUN, 'plan', 1), 'utf8')).toBe(want);
    expect((fs.statSync(agentLog).mode & 0o777).toString(8)).toBe('600');
    const db = new Database(path.join(ws, '.codemachine', 'logs', 'registry.db'), {
      readonly: true,
    });
    try {
      expect(db.prepare('SELECT pid FROM agents WHERE id = ?').get(id)).toEqual({ pid: 4242 });
    } finally {
      db.close();
    }
  });

  it('a job without a bridge-registered row (another layout, no id) gets no agent log', async () => {
    const { ws, id } = registered();
    const logs = writer(ws);
    const base = { runId: RUN, stepId: 'plan', attempt: 1 };
    logs.write(
      { ...base, payload: { layout: 'native', monitoringId: id } },
      {
        offset: 0,
        data: b64('x\n'),
      },
    );
    logs.write({ ...base, payload: { layout: 'codemachine' } }, { offset: 2, data: b64('y\n') });
    await logs.settled(RUN);
    expect(fs.readFileSync(stepLogPath(ws, RUN, 'plan', 1), 'utf8')).toBe('x\ny\n');
    const files = fs.readdirSync(path.join(ws, '.codemachine', 'logs'));
    expect(files.filter((f) => f.startsWith('agent-'))).toEqual([]);
  });

  it('refuses an agent log planted as a link out of the workspace; the step log is still written', async () => {
    const { ws, id } = registered();
    const outside = path.join(tmp(), 'stolen.log');
    fs.writeFileSync(outside, '');
    const job = {
      runId: RUN,
      stepId: 'plan',
      attempt: 1,
      payload: { layout: 'codemachine', monitoringId: id },
    };
    fs.symlinkSync(outside, remoteAgentLog(ws, job)!);
    const logs = writer(ws);
    logs.write(job, { offset: 0, data: b64('secret output\n') });
    await logs.settled(RUN);
    expect(fs.readFileSync(outside, 'utf8')).toBe('');
    expect(fs.readFileSync(stepLogPath(ws, RUN, 'plan', 1), 'utf8')).toBe('secret output\n');
  });
});
