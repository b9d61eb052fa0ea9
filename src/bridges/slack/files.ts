/**
 * Files on Slack: the files of an `app_mention` event or of a thread reply (`message` event,
 * subtype `file_share`) as neutral InboundFiles (pure), and their download (GET
 * `url_private_download` with the bot token as a Bearer header, scope files:read).
 * The token goes only to Slack's file host (`https://files.slack.com`) or the configured API
 * URL's origin (a test fake, a proxy): a URL pointing anywhere else is refused unfetched.
 */
import { InvalidInputError } from '../../errors.ts';
import { fetchCapped, tooBig } from '../download.ts';
import type { InboundFile } from '../events.ts';

/** Where Slack serves private files. */
const SLACK_FILES_ORIGIN = 'https://files.slack.com';

/** The fields of a Slack file object that are read. */
export interface SlackFileObject {
  readonly id?: string;
  readonly name?: string;
  readonly size?: number;
  readonly url_private?: string;
  readonly url_private_download?: string;
}

/** The neutral files of an event's `files` list (files without a download URL are skipped). */
export function filesOf(files: readonly SlackFileObject[] | undefined): InboundFile[] {
  const out: InboundFile[] = [];
  for (const [i, f] of (files ?? []).entries()) {
    const url = f.url_private_download ?? f.url_private;
    if (url === undefined) continue;
    out.push({
      name: f.name ?? `file-${i + 1}`,
      handle: url,
      ...(typeof f.size === 'number' && { size: f.size }),
    });
  }
  return out;
}

/** True when the bot token may be sent to `url`. */
export function trustedFileUrl(url: string, apiUrl: string | undefined): boolean {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return false;
  }
  if (origin === SLACK_FILES_ORIGIN) return true;
  return apiUrl !== undefined && origin === new URL(apiUrl).origin;
}

/** Downloads a file with the bot token; INVALID_INPUT when over `maxBytes` or from elsewhere. */
export async function downloadSlackFile(
  token: string,
  apiUrl: string | undefined,
  file: InboundFile,
  maxBytes: number,
): Promise<Uint8Array> {
  if (file.size !== undefined && file.size > maxBytes) throw tooBig(maxBytes);
  if (!trustedFileUrl(file.handle, apiUrl)) {
    throw new InvalidInputError('its download URL is not on Slack');
  }
  return fetchCapped(file.handle, { authorization: `Bearer ${token}` }, maxBytes, 'slack');
}
