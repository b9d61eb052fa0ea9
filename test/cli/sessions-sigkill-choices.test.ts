/**
 * Abort and Restart pressed on the offer of a coordinator session SIGKILLed mid-way (issue 14).
 * The harness (serve as a child process, Telegram fake, demo agent) is in sessions-sigkill.ts;
 * the Resume stories are in sessions-sigkill.test.ts and sessions-sigkill-late.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { announced, CASES, interrupt, setup, TIMEOUT_MS, when } from './sessions-sigkill.ts';

describe('a coordinator session SIGKILLed, then aborted or restarted from chat', () => {
  it('Abort (killed while executing): the run is cancelled and only .coordinator/ goes', {
    timeout: TIMEOUT_MS,
  }, async () => {
    const h = await setup();
    const before = await interrupt(h, CASES[2]!.reached, 'EXECUTING');
    const offer = await announced(h, before);
    const files = fs
      .readdirSync(h.ws)
      .filter((f) => f !== '.coordinator')
      .sort();
    expect(await h.answerTo(h.press(offer, 'Abort'))).toBe(
      `Aborting session ${before.session_id}…`,
    );
    await when(
      h.ws,
      () =>
        h
          .messages(/Interrupted coordinator session/)[0]!
          .text?.includes(
            `session ${before.session_id} aborted: .coordinator/ removed (task branches left alone)`,
          ),
      'the outcome on the offer',
    );
    expect(fs.existsSync(path.join(h.ws, '.coordinator'))).toBe(false);
    expect(fs.readdirSync(h.ws).sort()).toEqual(files);
    const run = JSON.parse(
      fs.readFileSync(
        path.join(h.ws, '.phasebridge', 'runs', before.phasebridge_run_id, 'run.json'),
        'utf8',
      ),
    );
    expect(run.status).toBe('cancelled');
    expect(h.archived()).toBeNull();
  });

  it('Restart (killed while verifying): the old run is cancelled and a fresh session runs', {
    timeout: TIMEOUT_MS,
  }, async () => {
    const h = await setup();
    const before = await interrupt(h, CASES[4]!.reached, 'VERIFYING');
    const offer = await announced(h, before);
    expect(await h.answerTo(h.press(offer, 'Restart'))).toBe(
      `Restarting session ${before.session_id}…`,
    );
    h.release();
    await when(
      h.ws,
      () =>
        h
          .messages(/Interrupted coordinator session/)[0]!
          .text?.match(new RegExp(`session ${before.session_id} restarted as run \\S+`)),
      'the outcome on the offer',
    );
    const plan = await when(h.ws, () => h.plans().at(-1), 'the new plan');
    h.press(plan, 'Approve');
    const final = await when(h.ws, () => h.archived(), 'the new session to complete');
    expect(final.state).toBe('IDLE');
    expect(final.session_id).not.toBe(before.session_id);
    expect(final.phasebridge_run_id).not.toBe(before.phasebridge_run_id);
    const old = JSON.parse(
      fs.readFileSync(
        path.join(h.ws, '.phasebridge', 'runs', before.phasebridge_run_id, 'run.json'),
        'utf8',
      ),
    );
    expect(old.status).toBe('cancelled');
    // Discovery ran again for the new session.
    expect(h.runsOf('discover')).toBe(2);
  });
});
