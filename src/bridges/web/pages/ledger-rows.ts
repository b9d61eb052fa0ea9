/**
 * Ledger lines (`ledger.jsonl`, one committed command a line) summarised for the run page.
 * Lenient on purpose: a line that does not parse is shown raw, never hidden.
 */
import { personName } from '../../../engine/person-name.ts';

/** One ledger line as the page shows it. */
export interface LedgerRow {
  readonly seq: string;
  readonly at: string;
  readonly command: string;
  readonly actor: string;
  /** Event types, comma-separated. */
  readonly events: string;
  /** The whole line, pretty-printed when it parses. */
  readonly raw: string;
}

const str = (v: unknown): string =>
  typeof v === 'string' || typeof v === 'number' ? String(v) : '';

function record(v: unknown): Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
    ? (v as Record<string, unknown>)
    : {};
}

/** Summarises ledger lines; blank lines are skipped, unparseable ones are marked. */
export function ledgerRows(lines: readonly string[]): LedgerRow[] {
  const rows: LedgerRow[] = [];
  for (const raw of lines) {
    if (raw.trim() === '') continue;
    let entry: Record<string, unknown>;
    try {
      entry = record(JSON.parse(raw));
    } catch {
      rows.push({ seq: '?', at: '', command: '(unreadable line)', actor: '', events: '', raw });
      continue;
    }
    const actor = record(entry.actor);
    const events = Array.isArray(entry.events)
      ? entry.events.map((ev) => str(record(ev).type))
      : [];
    rows.push({
      seq: str(entry.seq),
      at: str(entry.at),
      command: str(entry.command),
      // Named as everywhere else (a CLI actor without a name is its OS user, not `cli:…`).
      actor:
        str(actor.id) === ''
          ? str(actor.name)
          : personName({ id: str(actor.id), name: str(actor.name) }),
      events: events.filter(Boolean).join(', '),
      raw: JSON.stringify(entry, null, 2),
    });
  }
  return rows;
}
