import { objectField, parseJsonObject } from './usage.ts';

function nonEmpty(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : null;
}

/**
 * The engine's own session id announced by one stdout line, or null. Claude's `stream-json`
 * puts `session_id` on its `system`/`init` event (and repeats it on later events); `codex exec
 * --json` opens with `{"type":"thread.started","thread_id":…}` (older CLIs sent a
 * `session_configured` message). This is the id `claude --resume` / `codex resume` take.
 */
export function parseSessionLine(line: string): string | null {
  if (!line.includes('session') && !line.includes('thread.started')) return null;
  const event = parseJsonObject(line);
  if (event === null) return null;
  if (event.type === 'thread.started') return nonEmpty(event.thread_id);
  if (typeof event.type === 'string' && 'session_id' in event) return nonEmpty(event.session_id);
  const msg = objectField(event, 'msg');
  if (msg?.type === 'session_configured') return nonEmpty(msg.session_id);
  return null;
}
