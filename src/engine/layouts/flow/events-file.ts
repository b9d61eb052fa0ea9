/**
 * Reading flow's `events.jsonl`: one JSON object a line; a line that does not parse (a torn
 * write at the end, a foreign line) is skipped, as flow's iron law asks of every reader.
 */

/** The parseable JSON-object lines of an events.jsonl text, in order. */
export function readEventsJsonl(text: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const v = JSON.parse(line) as unknown;
      if (v !== null && typeof v === 'object' && !Array.isArray(v))
        out.push(v as Record<string, unknown>);
    } catch {
      // Unparseable (usually a trailing line a crashed writer left): skipped, never fatal.
    }
  }
  return out;
}
