/**
 * The fake Discord's REST requests before they are routed: the body read (JSON, or multipart with
 * `payload_json` and files), and the failures and 429s a test injected for the next matching call.
 */
import type { IncomingMessage } from 'node:http';
import type { Json, JsonObject } from './discord-wire.ts';

/** Which calls an injected failure applies to. */
export interface CallMatch {
  readonly method: string;
  readonly path: RegExp;
}

/** An injected answer: the status, body and headers the next matching call gets. */
export interface Injection {
  readonly match: CallMatch;
  readonly status: number;
  readonly body: JsonObject;
  readonly headers: Record<string, string>;
}

/** A 429 asking to wait `retryAfterSeconds`, with Discord's rate-limit headers. */
export function rateLimitInjection(
  match: CallMatch,
  retryAfterSeconds: number,
  options: { global?: boolean } = {},
): Injection {
  const seconds = String(retryAfterSeconds);
  return {
    match,
    status: 429,
    body: {
      message: 'You are being rate limited.',
      retry_after: retryAfterSeconds,
      global: options.global === true,
    },
    headers: {
      'retry-after': seconds,
      'x-ratelimit-limit': '5',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset-after': seconds,
      'x-ratelimit-bucket': 'fake-bucket',
      'x-ratelimit-scope': options.global ? 'global' : 'user',
      ...(options.global && { 'x-ratelimit-global': 'true' }),
    },
  };
}

/** Takes out of `injections` the first one matching this call, if any. */
export function takeInjection(
  injections: Injection[],
  method: string,
  path: string,
): Injection | undefined {
  const i = injections.findIndex((x) => x.match.method === method && x.match.path.test(path));
  return i < 0 ? undefined : injections.splice(i, 1)[0];
}

/** The whole body of a request. */
export function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** JSON bodies as they are; multipart bodies (file uploads) as `payload_json` plus the files. */
export async function parseBody(
  raw: Buffer,
  contentType: string,
): Promise<{ body: Json | undefined; files: { name: string; size: number; data: Buffer }[] }> {
  if (raw.length === 0) return { body: undefined, files: [] };
  if (!contentType.startsWith('multipart/form-data'))
    return { body: JSON.parse(raw.toString('utf8')) as Json, files: [] };
  const form = await new Response(raw, { headers: { 'content-type': contentType } }).formData();
  const files: { name: string; size: number; data: Buffer }[] = [];
  let body: Json | undefined;
  for (const [key, value] of form.entries()) {
    if (key === 'payload_json' && typeof value === 'string') body = JSON.parse(value) as Json;
    else if (typeof value !== 'string') {
      files.push({
        name: value.name,
        size: value.size,
        data: Buffer.from(await value.arrayBuffer()),
      });
    }
  }
  return { body, files };
}
