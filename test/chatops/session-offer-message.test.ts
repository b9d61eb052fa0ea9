/**
 * A session offer's outcome ("▶️ Resumed by @bob") in a busy Telegram group: the group allows 20
 * messages a minute and keeps the last 10 from progress edits, so an outcome paced as a progress
 * edit waited for the minute to pass (56 s in the SIGKILL story) while the run went on. It goes
 * as the decision it shows, like a checkpoint's: at once, the progress edit after it.
 */
import { describe, expect, it } from 'vitest';
import { TELEGRAM_LIMITS } from '../../src/bridges/outbox/limits.ts';
import { type PaceItem, Pacer } from '../../src/bridges/outbox/pacer.ts';
import { renderClosedOffer } from '../../src/chatops/session-offer-message.ts';
import type { SessionOfferRecord } from '../../src/db/repositories/session-offers.ts';

const GROUP = 'telegram:-1001';

const decided: SessionOfferRecord = {
  id: 1,
  workspace: '/ws',
  kind: 'coordinator',
  session: 'coord-2026-12-04-f8ce72',
  state: 'MERGING',
  chatRef: GROUP,
  messageRef: `${GROUP}/104`,
  buttonToken: 'tok',
  status: 'decided',
  decision: 'resume',
  decidedBy: 'telegram:502',
  decidedAt: Date.UTC(2026, 11, 4, 18, 15),
  createdAt: Date.UTC(2026, 11, 4, 18, 14),
  runId: null,
  decisionKey: 'chat:telegram:callback:1',
  decidedIn: GROUP,
  outcome: null,
  decisionShown: false,
  repeatOf: null,
};

describe('a session offer closed in a busy group', () => {
  it('shows who chose what at once, before a progress edit of the same minute', () => {
    const outcome = renderClosedOffer(decided, 'run r1 is running', { id: 'telegram:502' });
    expect(outcome.text.map((p) => p.text).join('')).toContain('▶️ Resumed by');
    const pacer = new Pacer(TELEGRAM_LIMITS);
    // Ten calls in the group's last minute, a second apart (its 1-a-second rate): the 10 slots
    // progress edits may use are taken.
    const t0 = 1_000_000;
    for (let i = 0; i < 10; i++) {
      const sent: PaceItem = {
        id: i + 1,
        lane: GROUP,
        kind: 'send',
        urgency: 'notice',
        notBefore: 0,
      };
      pacer.finished(sent, pacer.started(sent, t0 + i * 1000), t0 + i * 1000);
    }
    const now = t0 + 11_000;
    // An edit without an urgency is a progress (status) edit (Outbox.edit's default).
    const progress: PaceItem = {
      id: 11,
      lane: GROUP,
      kind: 'edit',
      urgency: 'status',
      notBefore: 0,
    };
    const closing: PaceItem = {
      id: 12,
      lane: GROUP,
      kind: 'edit',
      urgency: outcome.urgency ?? 'status',
      notBefore: 0,
    };
    expect(pacer.next([progress, closing], now)).toEqual({ start: closing });
    // The progress edit alone waits for the first call to leave the minute.
    expect(pacer.next([progress], now)).toEqual({ wakeAt: t0 + 60_000 });
  });
});
