import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_DIRECTIVE, type DirectiveParse, parseDirective } from '../../engine/directive.ts';

/** Writes `{"action":"continue"}` to the directive file (creating its folder) before a step. */
export function resetDirectiveFile(file: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(DEFAULT_DIRECTIVE)}\n`);
}

/**
 * Reads the directive an agent left. A missing file means `continue`; unreadable, invalid JSON
 * or a bad shape is an error with its reason (prefixed "invalid directive:"), never a continue.
 */
export function readDirectiveFile(file: string): DirectiveParse {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') return { ok: true, directive: DEFAULT_DIRECTIVE };
    return { ok: false, error: `invalid directive: cannot read ${file}: ${e.message}` };
  }
  const parsed = parseDirective(text);
  if (parsed.ok || parsed.error.startsWith('invalid directive')) return parsed;
  return { ok: false, error: `invalid directive: ${parsed.error}` };
}
