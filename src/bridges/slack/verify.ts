/**
 * Verification of Slack's signed HTTP requests (pure; the clock is passed in): `v0=` +
 * HMAC-SHA256(signing secret, `v0:{timestamp}:{raw body}`), and a timestamp within five minutes
 * of now in EITHER direction. Bolt only refuses old timestamps, so a request signed for the future
 * would stay replayable for as long as the attacker chose; this check closes that.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's documented replay window. */
const MAX_CLOCK_SKEW_SECONDS = 300;

/** The two headers Slack signs every request with (lower-case, as node:http gives them). */
export const SIGNATURE_HEADER = 'x-slack-signature';
/** Unix seconds at which Slack signed the request. */
export const TIMESTAMP_HEADER = 'x-slack-request-timestamp';

/** Why a request was refused; never includes the secret or the expected signature. */
export type VerifyFailure =
  | 'missing-headers'
  | 'malformed-timestamp'
  | 'timestamp-out-of-window'
  | 'bad-signature';

/** What `verifySlackRequest` needs. Header values may be absent or repeated (both refused). */
export interface SignedRequest {
  readonly signingSecret: string;
  readonly timestamp: string | readonly string[] | undefined;
  readonly signature: string | readonly string[] | undefined;
  /** The body exactly as received: re-serialising a parsed body changes the bytes. */
  readonly rawBody: string | Uint8Array;
  /** Current time in milliseconds since the epoch. */
  readonly nowMs: number;
}

/** Outcome of a verification. */
export type VerifyResult = { readonly ok: true } | { readonly ok: false; reason: VerifyFailure };

/** Computes the `v0=` signature Slack sends for a body signed at `timestamp`. */
export function slackSignature(
  signingSecret: string,
  timestamp: string,
  rawBody: string | Uint8Array,
): string {
  const hmac = createHmac('sha256', signingSecret);
  hmac.update(`v0:${timestamp}:`);
  hmac.update(rawBody);
  return `v0=${hmac.digest('hex')}`;
}

const single = (v: string | readonly string[] | undefined): string | undefined =>
  typeof v === 'string' && v !== '' ? v : undefined;

/** Checks the headers, the symmetric time window, then the signature (constant-time compare). */
export function verifySlackRequest(req: SignedRequest): VerifyResult {
  const timestamp = single(req.timestamp);
  const signature = single(req.signature);
  if (timestamp === undefined || signature === undefined) {
    return { ok: false, reason: 'missing-headers' };
  }
  if (!/^\d{1,12}$/.test(timestamp)) return { ok: false, reason: 'malformed-timestamp' };
  const skew = Math.abs(req.nowMs / 1000 - Number(timestamp));
  if (!(skew <= MAX_CLOCK_SKEW_SECONDS)) return { ok: false, reason: 'timestamp-out-of-window' };
  const expected = Buffer.from(slackSignature(req.signingSecret, timestamp, req.rawBody));
  const given = Buffer.from(signature);
  const same = given.length === expected.length && timingSafeEqual(given, expected);
  return same ? { ok: true } : { ok: false, reason: 'bad-signature' };
}
