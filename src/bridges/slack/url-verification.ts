/**
 * Slack's URL check before the bot token exists. Slack sends a signed `url_verification` to the
 * manifest's request URL as soon as the app is created, but the bot token only exists after the
 * app is installed; with just SLACK_SIGNING_SECRET set, `serve` mounts this under `/slack/` so
 * the URL can be verified first. Everything else is answered 503 (nothing is processed).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ChannelLogger } from '../channel.ts';
import { SIGNATURE_HEADER, TIMESTAMP_HEADER, verifySlackRequest } from './verify.ts';

/** A challenge body is tiny; anything bigger is refused unread. */
const MAX_BODY_BYTES = 64 * 1024;

/** Options of slackUrlVerificationHandler. */
export interface UrlVerificationOptions {
  readonly signingSecret: string;
  readonly log: ChannelLogger;
  readonly now?: () => number;
}

/** A request handler that answers only Slack's signed URL verification. */
export function slackUrlVerificationHandler(
  o: UrlVerificationOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const now = o.now ?? Date.now;
  return async (req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) {
        res.writeHead(413).end();
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks);
    const verdict = verifySlackRequest({
      signingSecret: o.signingSecret,
      timestamp: req.headers[TIMESTAMP_HEADER],
      signature: req.headers[SIGNATURE_HEADER],
      rawBody: raw,
      nowMs: now(),
    });
    if (!verdict.ok) {
      o.log.warn({ reason: verdict.reason }, 'slack: refused an unverified request');
      res.writeHead(401).end();
      return;
    }
    let body: { type?: unknown; challenge?: unknown } = {};
    try {
      body = JSON.parse(raw.toString('utf8')) as typeof body;
    } catch {
      // a form (command, button press): not a challenge
    }
    if (body?.type === 'url_verification' && typeof body.challenge === 'string') {
      o.log.info({}, 'slack: request URL verified; install the app and set SLACK_BOT_TOKEN next');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ challenge: body.challenge }));
      return;
    }
    res.writeHead(503, { 'content-type': 'text/plain' });
    res.end('phasebridge: SLACK_BOT_TOKEN is not set yet; only the URL check is answered\n');
  };
}
