/**
 * Fetches a file a person attached, for the adapters' `downloadFile`: streamed with a byte cap
 * (a body over the cap is cut off, never buffered whole), a time limit, and errors that never
 * carry the URL (Telegram's holds the bot token).
 */
import { InvalidInputError, PlatformError } from '../errors.ts';

/** How long one download may take. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

/** The refusal of a file over `maxBytes`. */
export function tooBig(maxBytes: number): InvalidInputError {
  return new InvalidInputError(`it is over the limit of ${maxBytes} bytes`);
}

/** GETs `url` with `headers`; INVALID_INPUT when the body exceeds `maxBytes`. */
export async function fetchCapped(
  url: string,
  headers: Record<string, string>,
  maxBytes: number,
  platform: string,
): Promise<Uint8Array> {
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: AbortSignal.timeout(DOWNLOAD_TIMEOUT_MS) });
  } catch (err) {
    throw new PlatformError(platform, `file download failed: ${(err as Error).name}`);
  }
  if (!res.ok || res.body === null) {
    await res.body?.cancel();
    throw new PlatformError(platform, `file download failed: HTTP ${res.status}`);
  }
  const announced = Number(res.headers.get('content-length'));
  if (Number.isFinite(announced) && announced > maxBytes) {
    await res.body.cancel();
    throw tooBig(maxBytes);
  }
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = res.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw tooBig(maxBytes);
    }
    parts.push(value);
  }
  return Buffer.concat(parts);
}
