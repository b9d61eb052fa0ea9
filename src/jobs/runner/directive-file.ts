/**
 * The directive file an agent may write (PHASEBRIDGE_DIRECTIVE_FILE). It lies in the workspace,
 * which the agent controls: it is replaced atomically and read without following a link.
 */
import path from 'node:path';
import { DEFAULT_DIRECTIVE, type DirectiveParse, parseDirective } from '../../engine/directive.ts';
import { writeFileAtomic } from '../../engine/ledger/atomic-write.ts';
import { readTextInside, STATE_FILE_MODE } from '../../engine/ledger/safe-path.ts';

/**
 * Writes `{"action":"continue"}` to the directive file (creating its folders, 0700) before a
 * step; `root` is the folder it is confined to (the workspace). A planted link is refused.
 * Not fsynced: the agent reads it from the page cache, and after a power cut the job runs again
 * and resets it again before its agent starts, so an fsync would only delay the spawn.
 */
export function resetDirectiveFile(file: string, root: string = path.dirname(file)): void {
  writeFileAtomic(file, `${JSON.stringify(DEFAULT_DIRECTIVE)}\n`, {
    root,
    mkdirs: true,
    mode: STATE_FILE_MODE,
    durable: false,
  });
}

/**
 * Reads the directive an agent left. A missing file means `continue`; unreadable (a planted link
 * included), invalid JSON or a bad shape is an error with its reason (prefixed "invalid
 * directive:"), never a continue.
 */
export function readDirectiveFile(file: string, root: string = path.dirname(file)): DirectiveParse {
  let text: string | null;
  try {
    text = readTextInside(root, file);
  } catch (err) {
    return { ok: false, error: `invalid directive: ${(err as Error).message}` };
  }
  if (text === null) return { ok: true, directive: DEFAULT_DIRECTIVE };
  const parsed = parseDirective(text);
  if (parsed.ok || parsed.error.startsWith('invalid directive')) return parsed;
  return { ok: false, error: `invalid directive: ${parsed.error}` };
}
