/**
 * Posts to an interaction's `response_url` (checked against the allowed origins first). Queues
 * and 429 retries of Web API calls are the shared ones in ../delivery.ts.
 */
import { InvalidInputError, PlatformError } from '../../errors.ts';
import { responseUrlError } from './errors.ts';

/** Where `response_url`s may point: Slack's hooks host, plus the origin of a non-default API URL. */
export function responseUrlOrigins(apiUrl: string | undefined): ReadonlySet<string> {
  const origins = new Set(['https://hooks.slack.com']);
  if (apiUrl !== undefined) origins.add(new URL(apiUrl).origin);
  return origins;
}

/**
 * POSTs JSON to a `response_url`. The URL is checked against `origins` first: interaction handles
 * travel through other modules, and a forged one must not make us POST anywhere else.
 */
export async function postToResponseUrl(
  url: string,
  body: Record<string, unknown>,
  origins: ReadonlySet<string>,
): Promise<void> {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    throw new InvalidInputError('response_url is not a URL');
  }
  if (!origins.has(origin)) throw new InvalidInputError(`response_url host ${origin} not allowed`);
  let res: Response;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (err) {
    throw new PlatformError('slack', `response_url failed: ${(err as Error).message}`, {
      cause: err,
    });
  }
  const text = await res.text().catch(() => '');
  if (!res.ok) throw responseUrlError(res.status, text, res.headers.get('retry-after'));
}
