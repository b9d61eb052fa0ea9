/**
 * Downloads and checks the files attached to a command, all of them before anything starts: one
 * refused file refuses the whole set (a run never starts with part of what its requester sent),
 * and the answer names the file and the limit it broke.
 */
import type { InboundFile } from '../bridges/events.ts';
import { PhasebridgeError } from '../errors.ts';
import { type ChatOpsDeps, channelFor } from './context.ts';
import {
  type CheckedInput,
  checkInput,
  DEFAULT_INPUT_LIMITS,
  extensionOf,
  limitsLine,
  refuseBeforeDownload,
  uniqueNames,
} from './input-files.ts';

/** The checked files, or the refusal to answer with (nothing was saved). */
export async function fetchInputs(
  deps: ChatOpsDeps,
  chatRef: string,
  files: readonly InboundFile[],
): Promise<CheckedInput[] | string> {
  const limits = deps.inputLimits ?? DEFAULT_INPUT_LIMITS;
  const refuse = (why: string) => `${why}. ${limitsLine(limits)}`;
  if (files.length > limits.maxFiles) {
    return refuse(`${files.length} files attached, over the limit of ${limits.maxFiles}`);
  }
  const channel = channelFor(deps, chatRef);
  if (channel?.downloadFile === undefined) return refuse('this chat cannot pass files on');
  for (const f of files) {
    const early = refuseBeforeDownload(f.name, f.size, limits);
    if (early !== undefined) return refuse(early);
  }
  const checked: CheckedInput[] = [];
  for (const [i, f] of files.entries()) {
    let data: Uint8Array;
    try {
      data = await channel.downloadFile(f, limits.maxBytes);
    } catch (err) {
      const why = err instanceof PhasebridgeError ? err.message : 'the download failed';
      deps.log.warn({ err, file: f.name }, 'chatops: attached file not downloaded');
      return refuse(`${f.name} could not be taken: ${why}`);
    }
    const got = checkInput(f.name, data, limits, `file-${i + 1}.${extensionOf(f.name)}`);
    if (typeof got === 'string') return refuse(got);
    checked.push(got);
  }
  return uniqueNames(checked);
}
