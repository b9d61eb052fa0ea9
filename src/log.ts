import type { DestinationStream, Logger, LoggerOptions } from 'pino';
import { pino } from 'pino';
import pretty from 'pino-pretty';

/** The logger type every component receives (a pino logger). */
export type Log = Logger;

const MASK = '[REDACTED]';

/** Shortest dot-separated piece of a token masked on its own (shorter ones are not secret). */
const MIN_SEGMENT_LENGTH = 8;

/**
 * Returns a function that masks every secret in a serialized log line. Secrets are matched both
 * raw and JSON-escaped, so a secret inside a quoted string or an error message is caught too.
 * Each dot-separated segment of a token (8+ characters) is masked on its own as well: SDKs log
 * "censored" tokens such as discord.js' `Bot <id>.<timestamp>.*****`.
 */
export function secretRedactor(secrets: readonly string[]): (line: string) => string {
  const needles = new Set<string>();
  const add = (s: string) => {
    needles.add(s);
    needles.add(JSON.stringify(s).slice(1, -1));
    needles.add(encodeURIComponent(s));
  };
  for (const s of secrets) {
    if (s.length < 4) continue; // masking a tiny string would shred every line
    add(s);
    // Not URLs: their host names are no secret (the password is listed on its own).
    if (s.includes('://')) continue;
    for (const segment of s.split('.')) {
      if (segment !== s && segment.length >= MIN_SEGMENT_LENGTH) add(segment);
    }
  }
  // Longest first, so a secret containing another is masked whole.
  const ordered = [...needles].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return (line) => line;
  return (line) => {
    let out = line;
    for (const n of ordered) if (out.includes(n)) out = out.split(n).join(MASK);
    return out;
  };
}

/** Options of createLogger. */
export interface CreateLoggerOptions {
  level?: string;
  secrets?: readonly string[];
  /** Human-readable output; default: when stdout is a TTY. */
  pretty?: boolean;
  /** Where lines go; default stdout. Tests pass a collecting stream. */
  destination?: DestinationStream;
}

/** The root logger: JSON lines by default, readable on a TTY, every configured secret masked. */
export function createLogger(options: CreateLoggerOptions = {}): Log {
  const redact = secretRedactor(options.secrets ?? []);
  const opts: LoggerOptions = {
    level: options.level ?? 'info',
    base: { app: 'phasebridge' },
    // The redaction runs on the serialized line, after every serializer: nothing escapes it.
    hooks: { streamWrite: redact },
  };
  const usePretty = options.pretty ?? (process.stdout.isTTY === true && !options.destination);
  if (usePretty) {
    const stream = pretty({
      colorize: true,
      ignore: 'pid,hostname,app',
      translateTime: 'HH:MM:ss',
      destination: options.destination ?? 1,
      sync: true,
    });
    return pino(opts, stream);
  }
  return pino(opts, options.destination ?? pino.destination({ dest: 1, sync: false }));
}

/** A child logger for one component, e.g. `componentLogger(root, 'telegram')`. */
export function componentLogger(root: Log, component: string): Log {
  return root.child({ component });
}
