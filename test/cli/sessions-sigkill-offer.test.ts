/**
 * A session offer across a SIGKILL of `serve` (issue 39): a coordinator session interrupted by a
 * first kill is offered by the next serve, which is killed in turn at a point of the offer's own
 * life, then served again (the harness, sessions-sigkill.ts: serve as a child process, the
 * Telegram fake, the demo agent):
 * - between Telegram's answer to the offer's send and the outbox's confirmation (the answer is
 *   held by the fake): the next serve sends it again; one message offers the choice, bridge.db
 *   knows its id, and the choice shows on both;
 * - between the choice's record and its application (the presser's answer is held): the next
 *   serve applies it, once, and shows it; the session is not offered again.
 */
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { StoredMessage } from '../fakes/telegram.ts';
import { CASES, interrupt, setup, TIMEOUT_MS, when } from './sessions-sigkill.ts';

const OFFER = /Interrupted coordinator session/;
const live = (ms: StoredMessage[]) =>
  ms.filter((m) => ((m.replyMarkup?.inline_keyboard ?? []) as unknown[][]).flat().length > 0);
const DISCOVERING = CASES[0]!;

describe('a session offer, serve SIGKILLed around it', () => {
  it('killed in the offer’s send window: one live offer, its id known, the choice on both messages', {
    timeout: TIMEOUT_MS,
  }, async () => {
    const h = await setup();
    const before = await interrupt(h, DISCOVERING.reached, DISCOVERING.state);
    const sent = h.fake.answerLater('sendMessage', (p) => OFFER.test(String(p.text ?? '')));
    await h.serve(true);
    await sent.arrived;
    await h.kill({ release: true });
    sent.release();
    h.hold();
    await h.serve(true);

    await when(h.ws, () => h.messages(OFFER).length === 2, 'the offer sent again');
    const [first, resent] = h.messages(OFFER) as [StoredMessage, StoredMessage];
    await when(h.ws, () => live(h.messages(OFFER)).length === 1, 'the first to lose its buttons');
    expect(live(h.messages(OFFER))[0]!.message_id).toBe(resent.message_id);
    const db = new Database(path.join(h.home, 'bridge.db'), { readonly: true });
    const [copy] = db.prepare('select message_ref from session_offers order by id').all() as {
      message_ref: string | null;
    }[];
    db.close();
    expect(copy!.message_ref).toMatch(new RegExp(`\\b${resent.message_id}$`));

    expect(await h.answerTo(h.press(resent, 'Abort'))).toBe(
      `Aborting session ${before.session_id}…`,
    );
    for (const id of [first.message_id, resent.message_id]) {
      await when(
        h.ws,
        () =>
          h
            .messages(OFFER)
            .find((m) => m.message_id === id)
            ?.text?.includes('Aborted by @bob'),
        `message ${id} to show the choice`,
      );
    }
    expect(live(h.messages(OFFER))).toEqual([]);
    expect(fs.existsSync(path.join(h.ws, '.coordinator'))).toBe(false);
  });

  it('killed between the choice and its application: applied once by the next serve, and shown', {
    timeout: TIMEOUT_MS,
  }, async () => {
    const h = await setup();
    const before = await interrupt(h, DISCOVERING.reached, DISCOVERING.state);
    const runId = before.phasebridge_run_id;
    const early = h.fake.answerLater('answerCallbackQuery', (p) =>
      String(p.text ?? '').startsWith('Aborting'),
    );
    await h.serve(true);
    const offer = await when(h.ws, () => h.messages(OFFER)[0], 'the offer');
    h.press(offer, 'Abort');
    // The choice is recorded in bridge.db; its application waits behind the presser's answer.
    await early.arrived;
    await h.kill({ release: true });
    early.release();
    expect(fs.existsSync(path.join(h.ws, '.coordinator'))).toBe(true);
    h.hold();
    await h.serve(true);

    await when(
      h.ws,
      () => h.messages(OFFER)[0]!.text?.includes('Aborted by @bob'),
      'the offer to show the choice',
    );
    await when(h.ws, () => !fs.existsSync(path.join(h.ws, '.coordinator')), 'the session gone');
    const run = JSON.parse(
      fs.readFileSync(path.join(h.ws, '.phasebridge', 'runs', runId, 'run.json'), 'utf8'),
    );
    expect(run.status).toBe('cancelled');
    expect(h.events(runId).filter((e) => e.type === 'runCancelled')).toHaveLength(1);
    expect(h.messages(OFFER)).toHaveLength(1);
    expect(live(h.messages(OFFER))).toEqual([]);
  });
});
