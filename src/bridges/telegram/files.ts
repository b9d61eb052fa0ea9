/**
 * Files on Telegram: the photos and documents of an inbound message as neutral InboundFiles
 * (pure), and their download (getFile, then GET `<apiRoot>/file/bot<token>/<file_path>`, the Bot
 * API's download URL; the URL holds the token, so it is never logged or put in an error).
 */
import type { Api } from 'grammy';
import type { Message } from 'grammy/types';
import { fetchCapped, tooBig } from '../download.ts';
import type { InboundFile } from '../events.ts';

/** The Bot API's own root, when none is configured. */
const DEFAULT_API_ROOT = 'https://api.telegram.org';

/** The files a message carries: its largest photo size and/or its document. */
export function filesOf(message: Message): InboundFile[] {
  const files: InboundFile[] = [];
  const photo = message.photo?.at(-1); // sizes come smallest first
  if (photo) {
    files.push({
      name: `photo-${message.message_id}.jpg`,
      handle: photo.file_id,
      ...(photo.file_size !== undefined && { size: photo.file_size }),
    });
  }
  const doc = message.document;
  if (doc) {
    files.push({
      name: doc.file_name ?? `document-${message.message_id}`,
      handle: doc.file_id,
      ...(doc.file_size !== undefined && { size: doc.file_size }),
    });
  }
  return files;
}

/** Downloads a file by its file_id; INVALID_INPUT when it is over `maxBytes`. */
export async function downloadTelegramFile(
  api: Api,
  bot: { readonly token: string; readonly apiRoot?: string | undefined },
  file: InboundFile,
  maxBytes: number,
): Promise<Uint8Array> {
  const { token, apiRoot } = bot;
  const info = await api.getFile(file.handle);
  if (info.file_size !== undefined && info.file_size > maxBytes) throw tooBig(maxBytes);
  if (info.file_path === undefined) throw tooBig(maxBytes); // the Bot API serves up to 20 MB
  const root = (apiRoot ?? DEFAULT_API_ROOT).replace(/\/+$/, '');
  return fetchCapped(`${root}/file/bot${token}/${info.file_path}`, {}, maxBytes, 'telegram');
}
