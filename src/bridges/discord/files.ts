/**
 * Files on Discord: the attachment options of a slash command (`/run file:`) and the attachments
 * of a guidance message (MESSAGE_CREATE) as neutral InboundFiles, and their download from
 * Discord's CDN (no token: attachment URLs are signed).
 * Only Discord's CDN hosts, or the configured API URL's origin (a test fake, a proxy), are
 * fetched; a URL anywhere else is refused unfetched.
 */
import { InvalidInputError } from '../../errors.ts';
import { fetchCapped, tooBig } from '../download.ts';
import type { InboundFile } from '../events.ts';

/** Where Discord serves attachments. */
const CDN_ORIGINS = ['https://cdn.discordapp.com', 'https://media.discordapp.net'];

/** The fields of a resolved attachment that are read. */
export interface AttachmentFacts {
  readonly name: string;
  readonly size: number;
  readonly url: string;
}

/** The neutral file of an attachment. */
export function toInboundFile(a: AttachmentFacts): InboundFile {
  return { name: a.name, size: a.size, handle: a.url };
}

/** True when `url` is on Discord's CDN or the configured API's origin. */
export function trustedAttachmentUrl(url: string, apiUrl: string | undefined): boolean {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return false;
  }
  if (CDN_ORIGINS.includes(origin)) return true;
  return apiUrl !== undefined && origin === new URL(apiUrl).origin;
}

/** Downloads an attachment; INVALID_INPUT when over `maxBytes` or not on Discord. */
export async function downloadDiscordFile(
  apiUrl: string | undefined,
  file: InboundFile,
  maxBytes: number,
): Promise<Uint8Array> {
  if (file.size !== undefined && file.size > maxBytes) throw tooBig(maxBytes);
  if (!trustedAttachmentUrl(file.handle, apiUrl)) {
    throw new InvalidInputError('its download URL is not on Discord');
  }
  return fetchCapped(file.handle, {}, maxBytes, 'discord');
}
