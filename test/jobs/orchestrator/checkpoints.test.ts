/** Checkpoint expiry timers (also after a restart), idempotent starts, layout exclusivity. */
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError } from '../../../src/errors.ts';
import { ALICE, ledgerOf, makeEnv, type TestEnv, waitFor } from './helpers.ts';

let env: TestEnv | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
});

const EXPIRING = [
  'id: expiring',
  'steps:',
  '  - id: a',
  '    agent: demo',
  '    prompt: "demo: sleep=10"',
  '    checkpoint:',
  '      when: after',
  '      expiresIn: EXPIRES',
  '      onExpiry: approve',
  '  - id: b',
  '    agent: demo',
  '    prompt: "demo: sleep=10"',
  '',
].join('\n');

describe('checkpoint expiry', () => {
  it('an expiry timer decides the checkpoint in the system actor’s name', async () => {
    env = await makeEnv();
    env.workflow('expiring', EXPIRING.replace('EXPIRES', '300ms'));
    const o = await env.open();
    const run = await o.startRun({
      workflow: 'expiring',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    expect((await o.waitUntilIdle(run.id)).status).toBe('awaiting');
    const state = await waitFor(async () => {
      const s = await o.getRun(run.id);
      return s.status === 'completed' ? s : undefined;
    });
    expect(state.checkpoints[0]?.decision).toMatchObject({ answer: 'approve' });
    expect(ledgerOf(state).map((e) => e.key)).toContain(`expire:${state.checkpoints[0]!.id}`);
  });

  it('timers are re-armed at start-up from open checkpoints', async () => {
    env = await makeEnv();
    env.workflow('expiring', EXPIRING.replace('EXPIRES', '700ms'));
    const first = await env.open();
    const run = await first.startRun({
      workflow: 'expiring',
      workspace: env.workspace,
      spec: 's',
      actor: ALICE,
    });
    expect((await first.waitUntilIdle(run.id)).status).toBe('awaiting');
    await first.close();

    const second = await env.open();
    const state = await waitFor(async () => {
      const s = await second.getRun(run.id);
      return s.status === 'completed' ? s : undefined;
    });
    expect(state.checkpoints[0]?.decision?.answer).toBe('approve');
  });
});

describe('starting runs', () => {
  it('the same idempotency key returns the same run', async () => {
    env = await makeEnv();
    const o = await env.open({ worker: false });
    const input = {
      workflow: 'demo',
      workspace: env.workspace,
      spec: 'once',
      actor: ALICE,
      key: 'tg:update:7',
    };
    const a = await o.startRun(input);
    const b = await o.startRun(input);
    expect(b.id).toBe(a.id);
    expect((await o.listRuns()).map((r) => r.id)).toEqual([a.id]);
    // A different key in the same second gets its own id.
    const c = await o.startRun({ ...input, key: 'tg:update:8' });
    expect(c.id).not.toBe(a.id);
  });

  it('one unfinished codemachine run per workspace', async () => {
    env = await makeEnv();
    const o = await env.open({ worker: false });
    const base = { workflow: 'demo', workspace: env.workspace, spec: 'cm', actor: ALICE };
    await o.startRun({ ...base, layout: 'codemachine' });
    await expect(o.startRun({ ...base, layout: 'codemachine' })).rejects.toBeInstanceOf(
      ConflictError,
    );
    const native = await o.startRun({ ...base, layout: 'native' });
    expect(native.layout).toBe('native');
  });

  it('unknown runs and workflows are NotFound', async () => {
    env = await makeEnv();
    const o = await env.open({ worker: false });
    await expect(o.getRun('2026-01-01T000000Z-nope')).rejects.toThrow(/not found/);
    await expect(
      o.startRun({ workflow: 'nope', workspace: env.workspace, spec: 's', actor: ALICE }),
    ).rejects.toThrow(/no workflow "nope"/);
  });
});
