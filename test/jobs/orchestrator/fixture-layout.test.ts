/**
 * Issue 37's proof that a state format is one module: the ticket layout of test/fixtures/ (one
 * state file, one rule, one word) is registered through the layouts table, and a run of it goes
 * through the orchestrator to a checkpoint and on to its end, with src/ untouched.
 */
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { plainTextOf } from '../../../src/bridges/render-text.ts';
import { outcomeMessage } from '../../../src/chatops/status-message.ts';
import { isLayoutName, registerLayout } from '../../../src/engine/layouts/index.ts';
import { TICKET, type Ticket, ticketFile, ticketModule } from '../../fixtures/layouts/ticket.ts';
import { ALICE, approve, makeEnv, type TestEnv } from './helpers.ts';

const TICKETED = `id: ticketed
layout: ticket
steps:
  - id: plan
    agent: demo
    prompt: plan it
    checkpoint:
      when: after
  - id: build
    agent: demo
    prompt: build it
`;

let env: TestEnv | undefined;
let unregister: (() => void) | undefined;
afterEach(async () => {
  await env?.dispose();
  env = undefined;
  unregister?.();
  unregister = undefined;
});

function ticketOf(workspace: string): Ticket {
  return JSON.parse(fs.readFileSync(ticketFile(workspace), 'utf8')) as Ticket;
}

describe('a format registered through the layouts table', () => {
  it('is refused while it is not in the table', async () => {
    expect(isLayoutName(TICKET)).toBe(false);
    env = await makeEnv();
    env.workflow('ticketed', TICKETED);
    const o = await env.open();
    await expect(
      o.startRun({ workflow: 'ticketed', workspace: env.workspace, spec: 'x', actor: ALICE }),
    ).rejects.toThrow(/layout/);
    expect(fs.existsSync(ticketFile(env.workspace))).toBe(false);
  });

  it('writes its state file, keeps its rule and words its outcome through a checkpointed run', async () => {
    unregister = registerLayout(ticketModule);
    expect(isLayoutName(TICKET)).toBe(true);
    env = await makeEnv();
    env.workflow('ticketed', TICKETED);
    const o = await env.open();

    const started = await o.startRun({
      workflow: 'ticketed',
      workspace: env.workspace,
      spec: 'Fix the login',
      actor: ALICE,
    });
    expect(started.layout).toBe(TICKET);
    let state = await o.waitUntilIdle(started.id);
    expect(state.status).toBe('awaiting');
    expect(state.checkpoint?.stepId).toBe('plan');
    expect(ticketOf(env.workspace)).toEqual({
      run: started.id,
      status: 'awaiting',
      step: 'plan',
      waiting_for: 'plan',
      done: ['plan'],
    });

    // The format's rule: its steps are never skipped (the engine alone would mark build skipped).
    const skip = await o.command(started.id, 'cli:skip-build', {
      type: 'skip',
      actor: ALICE,
      stepId: 'build',
      ahead: true,
    });
    expect(skip.ok).toBe(false);
    if (!skip.ok)
      expect(skip.rejection.message).toBe(
        "refused by the ticket's rule: step build cannot be skipped",
      );
    expect((await o.getRun(started.id)).seq).toBe(state.seq);

    state = await approve(o, started.id, 'cli:approve-plan');
    expect(state.status).toBe('completed');
    expect(ticketOf(env.workspace)).toMatchObject({ status: 'completed', done: ['plan', 'build'] });

    // The format's word: the line chat adds under the outcome.
    expect(plainTextOf(outcomeMessage(state).text)).toContain('Ticket closed after 2 step(s)');
    const [row] = await o.listRuns({ workspace: env.workspace });
    expect(row).toMatchObject({ id: started.id, layout: TICKET, status: 'completed' });
  });
});
