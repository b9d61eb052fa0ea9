/** Small text formatters shared by the CLI's renderers (pure; no colours, no I/O). */

/** A duration for people: `850ms`, `12.3s`, `4m05s`, `1h02m`. */
export function formatElapsed(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)}s`;
  const totalSeconds = Math.floor(ms / 1000);
  if (totalSeconds < 3600) {
    return `${Math.floor(totalSeconds / 60)}m${pad2(totalSeconds % 60)}s`;
  }
  const minutes = Math.floor(totalSeconds / 60);
  return `${Math.floor(minutes / 60)}h${pad2(minutes % 60)}m`;
}

/** A token count: `950`, `12.3k`, `1.2M`. */
export function formatTokens(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${trimZero((n / 1000).toFixed(1))}k`;
  return `${trimZero((n / 1_000_000).toFixed(1))}M`;
}

/** A cost in dollars: 4 decimals below a dollar (agent steps are cheap), else 2. */
export function formatCost(usd: number): string {
  return usd < 1 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/** An instant in UTC without milliseconds, e.g. `2026-11-29 14:30:00Z` (run ids are UTC too). */
export function formatInstant(at: string | number | Date): string {
  const date = at instanceof Date ? at : new Date(at);
  if (Number.isNaN(date.getTime())) return '-';
  const iso = date.toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z`;
}

/** Milliseconds between two ISO instants (`to` defaults to `now`); undefined without a start. */
export function elapsedBetween(
  from: string | undefined,
  to: string | undefined,
  now: Date,
): number | undefined {
  if (from === undefined) return undefined;
  const end = to === undefined ? now.getTime() : Date.parse(to);
  return Math.max(0, end - Date.parse(from));
}

/** Pads every column but the last to its widest cell, two spaces apart. */
export function alignColumns(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** Cuts `text` to `width` characters, ending with `…` when cut. */
export function truncate(text: string, width: number): string {
  if (width <= 0) return '';
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`;
}

function pad2(n: number): string {
  return String(n).padStart(2, '0');
}

function trimZero(text: string): string {
  return text.endsWith('.0') ? text.slice(0, -2) : text;
}
