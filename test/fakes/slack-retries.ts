/**
 * Slack's side of the 3 s ack deadline. Every request to the app is timed on the fake's clock; an
 * Events API request not acknowledged with a 2xx within 3 s (or answered with another status, or
 * not reached) is sent again, the same body with `X-Slack-Retry-Num` and `X-Slack-Retry-Reason`
 * (`retry_attempt` / `retry_reason` in Socket Mode): at once, after a minute, after five minutes,
 * then never again. A timed-out retry does not wait for the late answer: Slack does not either.
 * Slash commands and interactions are not retried (Slack shows the person an error instead); the
 * attempt is recorded as timed out.
 */
import type { FakeClock } from './slack-clock.ts';
import type { Delivery, SlackRequest } from './slack-wire.ts';

/** How long Slack waits for the app's acknowledgement. */
export const ACK_DEADLINE_MS = 3_000;
/** Delay before each Events API retry: right away, after 1 minute, after 5 minutes. */
export const EVENT_RETRY_DELAYS_MS: readonly number[] = [0, 60_000, 5 * 60_000];

/** Why Slack sent a request again, as its retry headers say. */
export type RetryReason = 'http_timeout' | 'http_error' | 'connection_failed';

/** One POST (or envelope) of a request to the app. */
export interface Attempt {
  readonly request: SlackRequest;
  /** 0 for the first delivery, then 1, 2, 3 like X-Slack-Retry-Num. */
  readonly retryNum: number;
  readonly retryReason?: RetryReason;
  /** The app's status once it answered (late answers are recorded too). */
  status?: number;
  /** True when the app did not answer within ACK_DEADLINE_MS. */
  timedOut: boolean;
}

/** Sends one attempt; `retry` is set for a redelivery. */
export type SendAttempt = (
  request: SlackRequest,
  retry: { num: number; reason: RetryReason } | undefined,
) => Promise<Delivery>;

/** Times deliveries and retries Events API requests the way Slack does. */
export class FakeSlackRetries {
  /** Every attempt, in order. */
  readonly attempts: Attempt[] = [];

  /** `send` posts one attempt; `changed` runs after each answer or timeout (for waiters). */
  constructor(
    readonly clock: FakeClock,
    readonly send: SendAttempt,
    readonly changed: () => void,
  ) {}

  /** The attempts of one request (same payload object), in order. */
  of(request: SlackRequest): Attempt[] {
    return this.attempts.filter((a) => a.request === request);
  }

  /** Delivers `request` and resolves with the app's answer to this attempt, however late. */
  deliver(request: SlackRequest, retryNum = 0, retryReason?: RetryReason): Promise<Delivery> {
    const attempt: Attempt = {
      request,
      retryNum,
      ...(retryReason !== undefined && { retryReason }),
      timedOut: false,
    };
    this.attempts.push(attempt);
    let answered = false;
    const cancel = this.clock.after(ACK_DEADLINE_MS, () => {
      if (answered) return;
      attempt.timedOut = true;
      this.#failed(request, retryNum, 'http_timeout');
      this.changed();
    });
    const retry = retryReason === undefined ? undefined : { num: retryNum, reason: retryReason };
    const answer = this.send(request, retry);
    answer.then(
      (d) => {
        answered = true;
        cancel();
        attempt.status = d.status;
        const ok = d.status >= 200 && d.status < 300;
        if (!ok && !attempt.timedOut) this.#failed(request, retryNum, 'http_error');
        this.changed();
      },
      () => {
        answered = true;
        cancel();
        if (!attempt.timedOut) this.#failed(request, retryNum, 'connection_failed');
        this.changed();
      },
    );
    return answer;
  }

  #failed(request: SlackRequest, retryNum: number, reason: RetryReason): void {
    const delay = EVENT_RETRY_DELAYS_MS[retryNum];
    if (request.kind !== 'events_api' || delay === undefined) return;
    this.clock.after(delay, () => {
      this.deliver(request, retryNum + 1, reason).catch(() => undefined);
    });
  }
}
