/**
 * Small response and request helpers shared by every route handler: JSON/text answers, a bounded
 * body reader, the HTTP status of a phasebridge error, and the security headers of our pages.
 */
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { type ErrorCode, InvalidInputError, PhasebridgeError } from '../errors.ts';

/** A request body was larger than the route accepts (answered 413). */
export class BodyTooLargeError extends InvalidInputError {
  constructor(limit: number) {
    super(`request body is larger than ${limit} bytes`);
  }
}

/** Headers every answer carries: no caching, no sniffing, no referrer (URLs may hold tokens). */
export const BASE_HEADERS: Readonly<OutgoingHttpHeaders> = Object.freeze({
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

/** Writes a JSON answer. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Writes a plain-text answer. */
export function sendText(
  res: ServerResponse,
  status: number,
  text: string,
  headers: OutgoingHttpHeaders = {},
): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Reads the whole body, refusing more than `limit` bytes (BodyTooLargeError). */
export async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? 0);
  if (declared > limit) throw new BodyTooLargeError(limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new BodyTooLargeError(limit);
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

const STATUS_OF_CODE: Partial<Record<ErrorCode, number>> = {
  UNAUTHORIZED: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  ILLEGAL_TRANSITION: 409,
  INVALID_INPUT: 400,
  RATE_LIMITED: 429,
};

/** The HTTP status that stands for an error; anything unknown is 500. */
export function httpStatusOf(err: unknown): number {
  if (err instanceof BodyTooLargeError) return 413;
  if (err instanceof PhasebridgeError) return STATUS_OF_CODE[err.code] ?? 500;
  return 500;
}

/** The request's URL, parsed against a fixed base; a target not starting with '/' yields '/'. */
export function requestUrl(req: IncomingMessage): URL {
  const target = req.url ?? '/';
  // Concatenate rather than resolve, so '//host/x' stays a path instead of naming a host.
  try {
    return new URL(`http://localhost${target.startsWith('/') ? target : '/'}`);
  } catch {
    return new URL('http://localhost/');
  }
}
