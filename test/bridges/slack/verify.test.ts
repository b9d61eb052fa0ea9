/** The pure request verifier: Slack's worked example, the symmetric window, malformed headers. */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { slackSignature, verifySlackRequest } from '../../../src/bridges/slack/verify.ts';

// The worked example of Slack's "Verifying requests from Slack" page.
const DOC = {
  signingSecret: '8f742231b10e8888abcd99yyyzzz85a5',
  timestamp: '1531420618',
  rawBody:
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  signature: 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503',
};
const AT = Number(DOC.timestamp) * 1000;

describe('verifySlackRequest', () => {
  it('computes and accepts the documented signature at the documented time', () => {
    expect(slackSignature(DOC.signingSecret, DOC.timestamp, DOC.rawBody)).toBe(DOC.signature);
    expect(verifySlackRequest({ ...DOC, nowMs: AT })).toEqual({ ok: true });
    expect(verifySlackRequest({ ...DOC, rawBody: Buffer.from(DOC.rawBody), nowMs: AT })).toEqual({
      ok: true,
    });
  });

  it('accepts ±300 s and refuses anything further, in both directions', () => {
    for (const offset of [-300_000, 300_000]) {
      expect(verifySlackRequest({ ...DOC, nowMs: AT + offset }).ok).toBe(true);
    }
    for (const offset of [-301_000, 301_000, 600_000, -86_400_000]) {
      expect(verifySlackRequest({ ...DOC, nowMs: AT + offset })).toEqual({
        ok: false,
        reason: 'timestamp-out-of-window',
      });
    }
  });

  it('refuses a wrong signature, secret or body', () => {
    const bad = { ok: false, reason: 'bad-signature' };
    expect(
      verifySlackRequest({ ...DOC, nowMs: AT, signature: `${DOC.signature.slice(0, -1)}0` }),
    ).toEqual(bad);
    expect(verifySlackRequest({ ...DOC, nowMs: AT, signingSecret: 'other' })).toEqual(bad);
    expect(verifySlackRequest({ ...DOC, nowMs: AT, rawBody: `${DOC.rawBody}&x=1` })).toEqual(bad);
    expect(verifySlackRequest({ ...DOC, nowMs: AT, signature: 'v0=short' })).toEqual(bad);
    // v1 or a bare hex digest is not the v0 scheme.
    const hex = createHmac('sha256', DOC.signingSecret)
      .update(`v0:${DOC.timestamp}:${DOC.rawBody}`)
      .digest('hex');
    expect(verifySlackRequest({ ...DOC, nowMs: AT, signature: hex })).toEqual(bad);
  });

  it('refuses missing, repeated and malformed headers', () => {
    expect(verifySlackRequest({ ...DOC, nowMs: AT, signature: undefined })).toEqual({
      ok: false,
      reason: 'missing-headers',
    });
    expect(verifySlackRequest({ ...DOC, nowMs: AT, timestamp: '' })).toMatchObject({
      reason: 'missing-headers',
    });
    expect(
      verifySlackRequest({ ...DOC, nowMs: AT, timestamp: [DOC.timestamp, DOC.timestamp] }),
    ).toMatchObject({ reason: 'missing-headers' });
    for (const timestamp of ['1531420618.5', '-1531420618', '0x5b47', ' 1531420618']) {
      expect(verifySlackRequest({ ...DOC, nowMs: AT, timestamp })).toMatchObject({
        reason: 'malformed-timestamp',
      });
    }
  });
});
