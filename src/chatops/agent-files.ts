/**
 * Files an agent declared in its directive (`files: [...]`, workspace-relative) go to the chat
 * with the step's answer and checkpoint. The parser already refused absolute and `..` paths
 * (engine/directive.ts); here each file is opened through the workspace-safe open, which refuses
 * a symlink anywhere on the way, a hard link, a FIFO or anything that resolves outside the
 * workspace, and is read only up to the size cap. A refused or missing file is named in the chat
 * with the reason; nothing outside the workspace is ever read.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Channel } from '../bridges/channel.ts';
import type { RichText } from '../bridges/messages.ts';
import { bold, plain, rich } from '../bridges/render-text.ts';
import { openInside, UnsafePathError } from '../engine/ledger/safe-path.ts';
import { type ChatOpsDeps, channelFor } from './context.ts';
import { DEFAULT_INPUT_LIMITS, formatBytes } from './input-files.ts';

/** One declared file: its bytes, or why it is not sent. */
export type AgentFile =
  | { readonly path: string; readonly data: Buffer }
  | { readonly path: string; readonly refused: string };

/** Reads one declared file inside `workspace`, refusing links, odd files and files over `max`. */
export function readAgentFile(workspace: string, rel: string, max: number): AgentFile {
  let fd: number;
  try {
    fd = openInside(workspace, rel, fs.constants.O_RDONLY);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return { path: rel, refused: 'it does not exist' };
    if (err instanceof UnsafePathError) {
      return {
        path: rel,
        refused: 'it is a link, not a regular file, or leads outside the workspace',
      };
    }
    return { path: rel, refused: 'it could not be opened' };
  }
  try {
    const { size } = fs.fstatSync(fd);
    if (size > max) {
      return {
        path: rel,
        refused: `it is ${formatBytes(size)}, over the limit of ${formatBytes(max)}`,
      };
    }
    const data = Buffer.alloc(size);
    let got = 0;
    while (got < size) {
      const n = fs.readSync(fd, data, got, size - got, got);
      if (n === 0) break;
      got += n;
    }
    return { path: rel, data: data.subarray(0, got) };
  } finally {
    fs.closeSync(fd);
  }
}

function caption(stepId: string, attempt: number, rel: string): RichText {
  return rich(bold(`📎 ${stepId}`), plain(` (attempt ${attempt}) sent ${rel}`));
}

/** Sends the files a step's directive declared to `chat`; failures are logged, never thrown. */
export async function postAgentFiles(
  deps: ChatOpsDeps,
  chat: string,
  at: { runId: string; workspace: string; stepId: string; attempt: number },
  declared: readonly string[],
): Promise<void> {
  const channel = channelFor(deps, chat);
  if (!channel || declared.length === 0) return;
  const max = (deps.inputLimits ?? DEFAULT_INPUT_LIMITS).maxBytes;
  const refused: string[] = [];
  for (const rel of declared) {
    const file = readAgentFile(at.workspace, rel, max);
    if ('refused' in file) {
      refused.push(`${rel}: ${file.refused}`);
      continue;
    }
    await sendOne(channel, chat, file.path, file.data, caption(at.stepId, at.attempt, rel));
  }
  if (refused.length > 0) {
    const head = bold(`📎 ${at.stepId}`);
    const text = `(attempt ${at.attempt}) asked to send files that were not sent:\n${refused.join('\n')}`;
    await channel.send(chat, {
      text: rich(head, plain(` ${text}`)),
      urgency: 'notice',
      key: `files-refused:${at.runId}:${at.stepId}:${at.attempt}`,
    });
  }
}

async function sendOne(
  channel: Channel,
  chat: string,
  rel: string,
  data: Buffer,
  cap: RichText,
): Promise<void> {
  if (channel.capabilities.files) {
    await channel.sendFile(chat, { name: path.basename(rel), data, caption: cap });
    return;
  }
  await channel.send(chat, { text: rich(...cap, plain(` (${formatBytes(data.byteLength)})`)) });
}
